import { z } from 'zod';
import { reply, routeDefiner } from '../../platform/http/route.ts';
import { ReadinessBody, SystemDescription } from './schemas.ts';
import { type DatabaseProbe, type SystemDeps, describeSystem } from './system.ts';

const ReadinessQuery = z.object({ verbose: z.string().optional() });

/** What the health routes' handlers receive: the instance's facts and its one database probe. */
export interface HealthRouteDeps extends SystemDeps {
  probe: DatabaseProbe;
}

const defineRoute = routeDefiner<HealthRouteDeps>();
const NO_STORE = { 'Cache-Control': 'no-store' };

export const healthRoutes = [
  defineRoute({
    method: 'GET',
    path: '/livez',
    needsDatabase: false,
    tag: 'health',
    summary: 'Liveness: the process answers; never touches a dependency',
    responses: { 200: z.object({ status: z.literal('ok') }) },
    handler: () => reply({ status: 'ok' }, { headers: NO_STORE }),
  }),
  defineRoute({
    method: 'GET',
    path: '/readyz',
    needsDatabase: false,
    tag: 'health',
    summary: 'Readiness: this instance can serve (its own checks pass) and is not draining',
    description:
      'Checks run concurrently, each bounded by 2 s; concurrent callers share one run, reused for 1 s. `?verbose` lists each check. ' +
      "`event_loop` and `pool` are this instance's own and make the answer 503. `database` is listed with its status but makes the answer 503 " +
      'only with `APP_READINESS_REQUIRES_DATABASE=1`: the database is shared by every instance, and its routes answer 503 `database_unavailable` on their own. ' +
      'Identity provider checks (`oidc:<name>`) and `ratelimit` (failing, with `since`, while this instance decides rate limits alone ' +
      'with its share of each limit because the database cannot decide in time) are listed but never make the answer 503.',
    query: ReadinessQuery,
    responses: { 200: ReadinessBody, 503: ReadinessBody },
    handler: async ({ query, deps }) => {
      if (deps.readiness.draining) {
        return reply({ status: 'shutting_down' }, { status: 503, headers: NO_STORE });
      }
      const report = await deps.readiness.current();
      const body = { status: report.ok ? 'ok' : 'unavailable', ...(query.verbose !== undefined ? { checks: report.checks } : {}) };
      return reply(body, { status: report.ok ? 200 : 503, headers: NO_STORE });
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
    handler: ({ deps }) => describeSystem(deps, deps.probe),
  }),
];
