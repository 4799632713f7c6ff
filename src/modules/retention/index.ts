import { retentionStatuses } from './errors.ts';
import { retentionJob } from './job.ts';
import type { RetentionJobDeps, RetentionServiceDeps } from './ports.ts';

export { retentionRoutes } from './routes.ts';
export { retentionStatuses } from './errors.ts';
export { RETENTION_JOB, RETENTION_ORDER } from './kinds.ts';
export { DEFAULT_BATCH_BOUNDS } from './job.ts';
export type { RetentionJobDeps, RetentionJobStatus, RetentionPurged, RetentionServiceDeps, RetentionSettings } from './ports.ts';

export type RetentionModuleDeps<Setting extends string = string> = RetentionJobDeps<Setting> & Omit<RetentionServiceDeps<Setting>, 'queryTimeoutMs'>;

/** The retention job's definition and what GET /ops/retention needs, over the aging targets it is given. */
export function createRetentionModule<Setting extends string>(deps: RetentionModuleDeps<Setting>) {
  return {
    job: retentionJob(deps),
    service: {
      targets: deps.targets,
      pool: deps.pool,
      settings: deps.settings,
      jobStatus: deps.jobStatus,
      queryTimeoutMs: 5_000,
    } satisfies RetentionServiceDeps<Setting>,
    statuses: retentionStatuses,
  };
}
