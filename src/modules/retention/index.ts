import { ensureAuditEventPartitions } from '../audit/index.ts';
import { jobsModule } from '../jobs/index.ts';
import { settingsModule } from '../settings/index.ts';
import { type BackplaneContext, defineModule } from '../../platform/module.ts';
import { retentionStatuses } from './errors.ts';
import { retentionRoutes } from './routes.ts';
import { retentionJob } from './job.ts';
import type { RetentionServiceDeps } from './ports.ts';
import { auditRetentionPurge, retentionJobStatus, retentionSettings } from './wiring.ts';

export { describeRetention } from './overview.ts';
export { retentionStatuses } from './errors.ts';
export { RETENTION_JOB, RETENTION_ORDER } from './kinds.ts';
export { DEFAULT_BATCH_BOUNDS } from './job.ts';
export type { RetentionJobDeps, RetentionJobStatus, RetentionPurged, RetentionServiceDeps, RetentionSettings } from './ports.ts';

/** What the retention module reads beyond the public context: every module's targets, the direct URL, the jobs module once created. */
export type RetentionContext = BackplaneContext<{ pools: { taskThread: number } }>;

/** Deletes each kind of data once older than its setting, with the `retention` job; GET /ops/retention shows where each kind stands. */
export const retentionModule = defineModule({
  name: 'retention',
  needs: ['audit', 'settings'],
  /** Audit action → what the event records: the catalogue (ADR 0120); names are public API. */
  auditActions: {
    'retention.purged': 'The retention job deleted rows of one kind',
  },
  routes: retentionRoutes,
  statuses: retentionStatuses,
  create(context: RetentionContext) {
    const settings = retentionSettings(context.use(settingsModule).reader);
    // The retention job reads its own status from the jobs module, created after it (its jobs go there).
    const jobStatus: RetentionServiceDeps['jobStatus'] = (db) => retentionJobStatus(context.later(jobsModule).service, db);
    const service: RetentionServiceDeps = { targets: context.collected.retention, pool: context.pool, settings, jobStatus, queryTimeoutMs: 5_000 };
    return {
      /** The overview, for commands (upgrade's checks). */
      api: { service },
      routeDeps: service,
      jobs: [
        retentionJob({
          targets: context.collected.retention,
          pool: context.pool,
          connectionString: context.directUrl,
          purgeConnections: context.config.pools.taskThread,
          settings,
          ensureAuditEventPartitions: () => ensureAuditEventPartitions(context.pool),
          recordPurge: auditRetentionPurge,
        }),
      ],
    };
  },
});
