import { z } from 'zod';
import { defineRoute } from '../../platform/http/route.ts';
import type { Readiness } from './readiness.ts';
import { ReadinessBody, SystemDescription } from './schemas.ts';
import { type SystemDeps, createDatabaseProbe, describeSystem } from './system.ts';

const ReadinessQuery = z.object({ verbose: z.string().optional() });

export function healthRoutes(deps: SystemDeps & { readiness: Readiness }) {
  const probe = createDatabaseProbe(deps);
  return [
    defineRoute({
      method: 'GET',
      path: '/livez',
      needsDatabase: false,
      tag: 'health',
      summary: 'Liveness: the process answers; never touches a dependency',
      responses: { 200: z.object({ status: z.literal('ok') }) },
      handler: ({ request }) => {
        request.setHeader('Cache-Control', 'no-store');
        return { status: 'ok' };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/readyz',
      needsDatabase: false,
      tag: 'health',
      summary: 'Readiness: every check passes and the instance is not draining',
      description:
        'Checks run concurrently, each bounded by 2 s; concurrent callers share one run, reused for 1 s. `?verbose` lists each check. ' +
        'Identity provider checks (`oidc:<name>`) and `ratelimit` (failing, with `since`, while this instance decides rate limits alone ' +
        'with its share of each limit because the database cannot decide in time) are listed but never make the answer 503.',
      query: ReadinessQuery,
      responses: { 200: ReadinessBody, 503: ReadinessBody },
      handler: async ({ query, request }) => {
        request.setHeader('Cache-Control', 'no-store');
        if (deps.readiness.draining) {
          request.setStatus(503);
          return { status: 'shutting_down' };
        }
        const report = await deps.readiness.current();
        request.setStatus(report.ok ? 200 : 503);
        return {
          status: report.ok ? 'ok' : 'unavailable',
          ...(query.verbose !== undefined ? { checks: report.checks } : {}),
        };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/ops/system',
      needsDatabase: false,
      permission: 'ops.system.read',
      tag: 'ops',
      summary: 'Describe the instance that answers the request',
      description: 'A failing database does not fail this answer: it stays 200 with the failure in `checks` and `database`.',
      responses: { 200: SystemDescription },
      handler: () => describeSystem(deps, probe),
    }),
  ];
}
