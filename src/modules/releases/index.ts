import { hostname } from 'node:os';
import { releaseInstancesAging } from './aging.ts';
import { type BackplaneContext, defineModule } from '../../platform/module.ts';
import { releasesSettings } from './settings.ts';
import { type InstanceTracker, trackInstance } from './heartbeat.ts';
import { releasesRoutes } from './routes.ts';
import { createRuntimeSnapshots } from './runtimeSnapshot.ts';

export type { InstanceRecord } from './store.ts';
export { countRunningInstances, selectInstances } from './store.ts';
export { instanceEntry } from './views.ts';
export { purgeReleaseInstances } from './purge.ts';
export { type CountedBeat, type ShareCount, UNCOUNTED, countShares, shareDivisor } from './shareCount.ts';

/** What the releases module reads beyond the public context. */
export type ReleasesContext = BackplaneContext<{ heartbeatSeconds: number }>;

export { releasesSettings } from './settings.ts';

/** Which instances run which release: each registers and heartbeats from the moment it serves. */
export const releasesModule = defineModule({
  name: 'releases',
  settings: releasesSettings,
  routes: releasesRoutes,
  statuses: {},
  /** Permission name → what it allows; names are public API. */
  permissions: { 'ops.releases.read': 'Read the releases and instances that ran against the database' },
  /** How its tables age and are purged by the retention job. */
  retention: [releaseInstancesAging],
  create(context: ReleasesContext) {
    const { pool, build, config } = context;
    const instance = {
      instanceId: context.instanceId,
      version: build.version,
      commit: build.commit,
      buildTime: build.buildTime,
      modified: build.modified,
      runtimeVersion: process.version,
      host: hostname(),
      pid: process.pid,
    };
    let tracker: InstanceTracker | undefined;
    return {
      api: {
        /** Running instances across the cluster as last read; undefined until this instance's first beat. */
        runningInstances: () => tracker?.runningInstances(),
        /** The divisor of this instance's share of a limit while deciding alone; undefined until every running instance counted it (ADR 0020). */
        shareDivisor: () => tracker?.shareDivisor(),
      },
      routeDeps: { db: pool, heartbeatSeconds: config.heartbeatSeconds },
      start() {
        // Announcements of other instances (a registration, a changed count) make this one beat at once.
        tracker = trackInstance(
          pool,
          instance,
          context.logger,
          config.heartbeatSeconds * 1000,
          context.listener,
          createRuntimeSnapshots(instance.version, pool),
        );
      },
      close: () => tracker?.stop(),
    };
  },
});
export { releaseInstancesAging } from './aging.ts';
