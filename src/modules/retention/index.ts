import { definePart } from '../../platform/module.ts';
import { retentionStatuses } from './errors.ts';
import { retentionRoutes } from './routes.ts';
import { retentionJob } from './job.ts';
import type { RetentionJobDeps, RetentionServiceDeps } from './ports.ts';

export { describeRetention } from './overview.ts';
export { retentionStatuses } from './errors.ts';
export { RETENTION_JOB, RETENTION_ORDER } from './kinds.ts';
export { DEFAULT_BATCH_BOUNDS } from './job.ts';
export type { RetentionJobDeps, RetentionJobStatus, RetentionPurged, RetentionServiceDeps, RetentionSettings } from './ports.ts';

export type RetentionNeeds = RetentionJobDeps & Omit<RetentionServiceDeps, 'queryTimeoutMs'>;

/** Deletes each kind of data once older than its setting, with the `retention` job; GET /ops/retention shows where each kind stands. */
export const retentionModule = definePart({
  name: 'retention',
  /** Audit action → what the event records: the catalogue (ADR 0120); names are public API. */
  auditActions: {
    'retention.purged': 'The retention job deleted rows of one kind',
  },
  routes: retentionRoutes,
  statuses: retentionStatuses,
  create(needs: RetentionNeeds) {
    const service: RetentionServiceDeps = { targets: needs.targets, pool: needs.pool, settings: needs.settings, jobStatus: needs.jobStatus, queryTimeoutMs: 5_000 };
    return {
      /** The overview, for commands (upgrade's checks). */
      api: { service },
      routeDeps: service,
      jobs: [retentionJob(needs)],
    };
  },
});
