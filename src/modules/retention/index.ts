import { retentionStatuses } from './errors.ts';
import { retentionJob } from './job.ts';
import type { RetentionJobDeps, RetentionServiceDeps } from './ports.ts';

export { retentionRoutes } from './routes.ts';
export { describeRetention } from './overview.ts';
export { retentionStatuses } from './errors.ts';
export { RETENTION_JOB, RETENTION_KINDS, type RetentionSetting } from './kinds.ts';
export { DEFAULT_BATCH_BOUNDS } from './job.ts';
export type { RetentionJobDeps, RetentionJobStatus, RetentionPurgeEvent, RetentionServiceDeps, RetentionSettings } from './ports.ts';
export type { BatchBounds } from './tasks/batches.ts';

export type RetentionModuleDeps = RetentionJobDeps & Omit<RetentionServiceDeps, 'queryTimeoutMs'>;

/** The retention job's definition and what GET /ops/retention needs. */
export function createRetentionModule(deps: RetentionModuleDeps) {
  return {
    job: retentionJob(deps),
    service: { pool: deps.pool, settings: deps.settings, jobStatus: deps.jobStatus, queryTimeoutMs: 5_000 } satisfies RetentionServiceDeps,
    statuses: retentionStatuses,
  };
}
