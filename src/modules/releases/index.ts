import type { Logger } from 'pino';
import { releaseInstancesAging } from './aging.ts';
import type { NotificationListener } from '../../platform/db/listener.ts';
import type { Queryable } from '../../platform/db/pool.ts';
import { definePart } from '../../platform/module.ts';
import { releasesSettings } from './settings.ts';
import { type InstanceTracker, trackInstance } from './heartbeat.ts';
import { releasesRoutes } from './routes.ts';
import { createRuntimeSnapshots } from './runtimeSnapshot.ts';
import type { InstanceRecord } from './store.ts';

export type { InstanceRecord } from './store.ts';
export { countRunningInstances, selectInstances } from './store.ts';
export { instanceEntry } from './views.ts';
export { purgeReleaseInstances } from './purge.ts';

export interface ReleasesNeeds {
  pool: Queryable;
  /** Announcements of other instances (a registration, a changed count), so this one beats at once. */
  listener?: Pick<NotificationListener, 'listen'>;
  logger: Logger;
  instance: InstanceRecord;
  heartbeatSeconds: number;
}

export { releasesSettings } from './settings.ts';

/** Which instances run which release: each registers and heartbeats from the moment it serves. */
export const releasesModule = definePart({
  name: 'releases',
  settings: releasesSettings,
  routes: releasesRoutes,
  statuses: {},
  /** Permission name → what it allows; names are public API. */
  permissions: { 'ops.releases.read': 'Read the releases and instances that ran against the database' },
  /** How its tables age and are purged by the retention job. */
  retention: [releaseInstancesAging],
  create(needs: ReleasesNeeds) {
    let tracker: InstanceTracker | undefined;
    return {
      api: {
        /** Running instances across the cluster as last read; undefined until this instance's first beat. */
        runningInstances: () => tracker?.runningInstances(),
        /** The divisor of this instance's share of a limit while deciding alone; undefined until every running instance counted it (ADR 0020). */
        shareDivisor: () => tracker?.shareDivisor(),
      },
      routeDeps: { db: needs.pool, heartbeatSeconds: needs.heartbeatSeconds },
      start() {
        tracker = trackInstance(needs.pool, needs.instance, needs.logger, needs.heartbeatSeconds * 1000, needs.listener, createRuntimeSnapshots(needs.instance.version, needs.pool));
      },
      close: () => tracker?.stop(),
    };
  },
});
export { releaseInstancesAging } from './aging.ts';
