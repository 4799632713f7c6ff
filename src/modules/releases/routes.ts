import { z } from 'zod';
import { timestamp } from '../../platform/http/schemas.ts';
import type { Queryable } from '../../platform/db/pool.ts';
import { routeDefiner } from '../../platform/http/route.ts';
import { selectInstances } from './store.ts';
import { instanceEntry } from './views.ts';
import { RuntimeSnapshotSchema } from './schemas.ts';
import { PageCursor, PageLimit, keysetPage, rowsForPage } from '../../platform/http/paging.ts';

const ListQuery = z.object({
  limit: PageLimit(200),
  cursor: PageCursor.optional(),
  running: z
    .enum(['true', 'false'])
    .transform((value) => value === 'true')
    .optional(),
});

const InstanceEntry = z.object({
  instance_id: z.string(),
  version: z.string(),
  commit: z.string().nullable(),
  build_time: z.string().nullable(),
  modified: z.boolean(),
  runtime_version: z.string(),
  host: z.string(),
  pid: z.number().int(),
  started_at: timestamp(),
  last_seen_at: timestamp(),
  stopped_at: timestamp().nullable(),
  running: z.boolean(),
  runtime: RuntimeSnapshotSchema.nullable(),
});

const InstancePage = z.object({ instances: z.array(InstanceEntry), next_cursor: z.string().optional() });

/** What the releases routes' handlers receive. */
export interface ReleasesRouteDeps {
  db: Queryable;
  heartbeatSeconds: number;
}

const defineRoute = routeDefiner<ReleasesRouteDeps>();

export const releasesRoutes = [
  defineRoute({
    method: 'GET',
    path: '/ops/releases/instances',
    permission: 'ops.releases.read',
    tag: 'ops',
    summary: 'Instances of the application, newest first',
    description:
      'An instance is running when it has not stopped and sent a heartbeat within three heartbeat intervals (APP_HEARTBEAT_SECONDS, 15 s by default).',
    query: ListQuery,
    responses: { 200: InstancePage },
    handler: async ({ query, deps }) => {
      const rows = await selectInstances(deps.db, {
        staleAfterSeconds: 3 * deps.heartbeatSeconds,
        afterId: query.cursor,
        running: query.running,
        limit: rowsForPage(query.limit),
      });
      const { page, nextCursor } = keysetPage(rows, query.limit);
      return {
        instances: page.map(instanceEntry),
        ...nextCursor,
      };
    },
  }),
];
