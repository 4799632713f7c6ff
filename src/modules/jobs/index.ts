import type pg from 'pg';
import { jobDefinitionHistoryAging, jobRunsAging } from './aging.ts';
import type { Logger } from 'pino';
import type client from 'prom-client';
import type { NotificationListener } from '../../platform/db/listener.ts';
import type { RunTask } from '../../platform/tasks/pool.ts';
import { type JobDefinition, createJobRegistry } from './definitions.ts';
import { jobsStatuses } from './errors.ts';
import { createJobMetrics, registerJobTimestampMetrics } from './metrics.ts';
import type { RecordAudit } from '../../platform/audit.ts';
import { type BackplaneContext, defineModule } from '../../platform/module.ts';
import { auditModule } from '../audit/index.ts';
import { releasesModule } from '../releases/index.ts';
import type { JobsServiceDeps } from './ports.ts';
import { jobsRoutes } from './routes.ts';
import { startJobScheduler } from './scheduler.ts';
import { startJobWorkers } from './worker.ts';
import { testJobDefinitions } from './testJobs.ts';

export { defineJob, type JobBacklog, type JobContext, type JobDefinition } from '../../platform/jobs.ts';
export { jobsStatuses } from './errors.ts';
export { describeJob, type JobStatus } from './jobStatus.ts';
export type { JobsServiceDeps } from './ports.ts';
export { changeDefinition } from './changeDefinition.ts';
// For backplane commands, which call the same operations as the routes.
export { listDefinitions } from './listings.ts';
export { describeJobs } from './overview.ts';
export { requestRun } from './requestRun.ts';
export { purgeDefinitionHistory, purgeFinishedRuns } from './store/purge.ts';
export { jobDefinitionHistoryAging, jobRunsAging } from './aging.ts';
export { jobEnabled } from './store/enabled.ts';

export interface JobsNeeds {
  pool: pg.Pool;
  listener: NotificationListener;
  logger: Logger;
  registry: client.Registry;
  runTask: RunTask;
  instanceId: string;
  /** Every module's jobs. */
  definitions: JobDefinition[];
  /** Claim loops on this instance; 0 = it schedules but runs no jobs. */
  workers: number;
  queues: string[];
  leaseSeconds: number;
  /** Running instances across the cluster (the heartbeat's count); they share the sweep of abandoned runs. */
  runningInstances: () => number | undefined;
  recordAudit: RecordAudit;
}

/** What the jobs module reads beyond the public context: every module's jobs, its share of the configuration. */
export type JobsContext = BackplaneContext<{ jobWorkers: number; jobQueues: string[]; jobLeaseSeconds: number; testJobs: boolean }>;

/** Background jobs: definitions checked at creation; scheduling and workers start with the instance and drain with it. */
export const jobsModule = defineModule({
  name: 'jobs',
  needs: ['audit', 'releases'],
  /** Audit action → what the event records: the catalogue (ADR 0120); names are public API. */
  auditActions: {
    'jobs.definition.changed': 'A job definition was enabled, disabled or rescheduled',
    'jobs.run.retried': 'A failed job run was queued again',
  },
  routes: jobsRoutes,
  statuses: jobsStatuses,
  /** Permission name → what it allows; names are public API. */
  permissions: {
    'ops.jobs.read': 'Read job definitions, runs and the jobs overview',
    'ops.jobs.write': 'Enable, disable and reschedule jobs',
    'ops.jobs.run': 'Queue a run of a job now',
  },
  /** How its tables age and are purged by the retention job. */
  retention: [jobDefinitionHistoryAging, jobRunsAging],
  create(context: JobsContext) {
    const { config, serving } = context;
    const needs: JobsNeeds = {
      pool: context.pool,
      listener: context.listener,
      logger: context.logger,
      registry: context.registry,
      runTask: context.runTask,
      instanceId: context.instanceId,
      // APP_TEST_JOBS=1 adds jobs that only exercise the job system (refused in production).
      definitions: [...context.collected.jobs(), ...(config.testJobs ? testJobDefinitions() : [])],
      workers: serving ? config.jobWorkers : 0,
      queues: serving ? config.jobQueues : [],
      leaseSeconds: config.jobLeaseSeconds,
      runningInstances: serving ? context.use(releasesModule).runningInstances : () => undefined,
      recordAudit: context.use(auditModule).recordAudit,
    };
    const jobs = createJobRegistry(needs.definitions);
    const metrics = createJobMetrics(
      needs.registry,
      jobs.list().map((job) => job.name),
    );
    registerJobTimestampMetrics(needs.registry, needs.pool, () => jobs.list().map((job) => job.name));
    const logger = needs.logger.child({ module: 'jobs' });
    const service: JobsServiceDeps = { pool: needs.pool, jobs, recordAudit: needs.recordAudit, queryTimeoutMs: 5_000 };
    let stopScheduler: (() => Promise<void>) | undefined;
    let stopWorkers: ((drainMs: number) => Promise<void>) | undefined;
    return {
      api: {
        service,
        /** What GET /ops/system reports: the workers this instance runs and the queues they consume. */
        workerInfo: { workers: needs.workers, queues: needs.workers > 0 ? [...needs.queues] : [] },
      },
      routeDeps: service,
      start() {
        stopScheduler = startJobScheduler({ db: needs.pool, listener: needs.listener, jobs, logger, runningInstances: needs.runningInstances }).stop;
        if (needs.workers > 0) {
          stopWorkers = startJobWorkers({ ...needs, db: needs.pool, jobs, logger, metrics }).stop;
        }
      },
      /** Stops scheduling and claiming; running attempts get the timeout, then are released. */
      async drain(timeoutMs: number) {
        await stopScheduler?.();
        await stopWorkers?.(timeoutMs);
      },
    };
  },
});
