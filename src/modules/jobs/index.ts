import type pg from 'pg';
import type { Logger } from 'pino';
import type client from 'prom-client';
import type { NotificationListener } from '../../platform/db/listener.ts';
import type { RunTask } from '../../platform/tasks/pool.ts';
import { type JobDefinition, createJobRegistry } from './definitions.ts';
import { jobsStatuses } from './errors.ts';
import { createJobMetrics, registerJobTimestampMetrics } from './metrics.ts';
import type { JobsServiceDeps, RecordJobDefinitionChange } from './ports.ts';
import { startJobScheduler } from './scheduler.ts';
import { startJobWorkers } from './worker.ts';

export { defineJob, type JobBacklog, type JobContext, type JobDefinition } from './definitions.ts';
export { jobsStatuses } from './errors.ts';
export { describeJob, type JobStatus } from './jobStatus.ts';
export type { JobDefinitionChangeEvent, JobsServiceDeps, RecordJobDefinitionChange } from './ports.ts';
export { jobsRoutes } from './routes.ts';
// For backplane commands, which call the same operations as the routes.
export { changeDefinition } from './changeDefinition.ts';
export { listDefinitions } from './listings.ts';
export { describeJobs } from './overview.ts';
export { requestRun } from './requestRun.ts';
export { purgeDefinitionHistory, purgeFinishedRuns } from './store/purge.ts';

export interface JobsModuleDeps {
  pool: pg.Pool;
  listener: NotificationListener;
  logger: Logger;
  registry: client.Registry;
  runTask: RunTask;
  instanceId: string;
  definitions: JobDefinition[];
  /** Claim loops on this instance; 0 = it schedules but runs no jobs. */
  workers: number;
  queues: string[];
  leaseSeconds: number;
  recordDefinitionChange: RecordJobDefinitionChange;
}

/** Definitions checked at creation; scheduling and workers start with start() and drain with stop(). */
export function createJobsModule(deps: JobsModuleDeps) {
  const jobs = createJobRegistry(deps.definitions);
  const metrics = createJobMetrics(deps.registry);
  registerJobTimestampMetrics(deps.registry, deps.pool, () => jobs.list().map((job) => job.name));
  const logger = deps.logger.child({ module: 'jobs' });
  const service: JobsServiceDeps = { pool: deps.pool, jobs, recordDefinitionChange: deps.recordDefinitionChange, queryTimeoutMs: 5_000 };
  let stopScheduler: (() => Promise<void>) | undefined;
  let stopWorkers: ((drainMs: number) => Promise<void>) | undefined;
  return {
    service,
    statuses: jobsStatuses,
    /** What GET /ops/system reports: the workers this instance runs and the queues they consume. */
    workerInfo: { workers: deps.workers, queues: deps.workers > 0 ? [...deps.queues] : [] },
    start() {
      stopScheduler = startJobScheduler({ db: deps.pool, listener: deps.listener, jobs, logger }).stop;
      if (deps.workers > 0) {
        stopWorkers = startJobWorkers({
          db: deps.pool,
          listener: deps.listener,
          jobs,
          logger,
          metrics,
          runTask: deps.runTask,
          instanceId: deps.instanceId,
          workers: deps.workers,
          queues: deps.queues,
          leaseSeconds: deps.leaseSeconds,
        }).stop;
      }
    },
    /** Stops scheduling and claiming; running attempts get drainMs, then are released. */
    async stop(drainMs: number) {
      await stopScheduler?.();
      await stopWorkers?.(drainMs);
    },
  };
}
