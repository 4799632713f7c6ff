import type { Logger } from 'pino';
import type { NotificationListener } from '../../platform/db/listener.ts';
import { PG, pgCode } from '../../platform/db/pgErrors.ts';
import type { Queryable } from '../../platform/db/pool.ts';
import type { RunTask } from '../../platform/tasks/pool.ts';
import type { JobRegistry } from './definitions.ts';
import { type Execution, executeRun } from './execute.ts';
import type { JobMetrics } from './metrics.ts';
import { deleteConsumer, deleteStaleConsumers, upsertConsumer } from './store/consumers.ts';
import { RUNS_CHANNEL, claimRun, releaseRuns } from './store/runs.ts';

export interface JobWorkersOptions {
  db: Queryable;
  listener: NotificationListener;
  jobs: JobRegistry;
  logger: Logger;
  metrics: JobMetrics;
  runTask: RunTask;
  instanceId: string;
  workers: number;
  queues: string[];
  leaseSeconds: number;
  /** Longest idle wait between claims; notifications wake workers sooner. */
  pollMs?: number;
}

export interface JobWorkers {
  /** Stops claiming, lets running attempts finish within drainMs, then stops and releases the rest. */
  stop(drainMs: number): Promise<void>;
}

const CONSUMER_BEAT_MS = 5_000;

/** Settles after ms, or sooner when the returned wake is called. */
function waiter(): { wait(ms: number): Promise<void>; wakeAll(): void } {
  const sleepers = new Set<() => void>();
  return {
    wait: (ms) =>
      new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          sleepers.delete(done);
          resolve();
        };
        const timer = setTimeout(done, ms);
        sleepers.add(done);
      }),
    wakeAll: () => [...sleepers].forEach((done) => done()),
  };
}

/** APP_JOB_WORKERS claim loops on this instance's queues, each running one attempt at a time. */
export function startJobWorkers(options: JobWorkersOptions): JobWorkers {
  const { db, logger } = options;
  const pollMs = options.pollMs ?? 1_000;
  const executions = new Map<string, Execution>();
  const idle = waiter();
  const claimRequest = { instanceId: options.instanceId, queues: options.queues, jobs: options.jobs.names(), leaseSeconds: options.leaseSeconds };
  let stopping = false;
  let claimsFailing = false;

  async function claimAndRun(): Promise<boolean> {
    let claimed;
    try {
      claimed = await claimRun(db, claimRequest);
    } catch (error) {
      // Two workers took two runs of one job at once; the unique index turned the second away.
      if (pgCode(error) !== PG.uniqueViolation && !claimsFailing) {
        claimsFailing = true;
        logger.warn({ err: error }, 'claiming job runs failed; retrying');
      }
      return false;
    }
    if (claimsFailing) {
      claimsFailing = false;
      logger.info('claiming job runs works again');
    }
    if (!claimed) {
      return false;
    }
    if (stopping) {
      await releaseRuns(db, [claimed.id], options.instanceId).catch(() => undefined);
      return false;
    }
    const execution = executeRun(
      { db, runTask: options.runTask, logger, metrics: options.metrics, instanceId: options.instanceId, leaseSeconds: options.leaseSeconds },
      options.jobs.get(claimed.job)!,
      claimed,
    );
    executions.set(claimed.id, execution);
    await execution.done;
    executions.delete(claimed.id);
    return true;
  }

  async function loop(): Promise<void> {
    while (!stopping) {
      if (!(await claimAndRun()) && !stopping) {
        await idle.wait(pollMs);
      }
    }
  }

  const beat = () =>
    upsertConsumer(db, options.instanceId, options.queues, options.workers).catch((error: unknown) =>
      logger.warn({ err: error }, 'job consumer heartbeat failed; retrying'),
    );
  void deleteStaleConsumers(db).catch(() => undefined);
  void beat();
  const heartbeat = setInterval(() => void beat(), CONSUMER_BEAT_MS);
  heartbeat.unref();
  options.listener.listen(RUNS_CHANNEL, (queue) => {
    if (options.queues.includes(queue)) {
      idle.wakeAll();
    }
  });
  options.listener.onConnected(() => idle.wakeAll());
  // Without any job in code there is nothing to claim; the instance still announces its queues.
  const loops = claimRequest.jobs.length > 0 ? Array.from({ length: options.workers }, () => loop()) : [];

  return {
    async stop(drainMs) {
      stopping = true;
      clearInterval(heartbeat);
      idle.wakeAll();
      const deadline = new Promise<void>((resolve) => setTimeout(resolve, drainMs).unref());
      await Promise.race([Promise.all([...executions.values()].map((execution) => execution.done)), deadline]);
      const unfinished = [...executions.values()];
      if (unfinished.length > 0) {
        unfinished.forEach((execution) => execution.stopForShutdown());
        await Promise.all(unfinished.map((execution) => execution.done));
        const released = await releaseRuns(
          db,
          unfinished.map((execution) => execution.runId),
          options.instanceId,
        ).catch((error: unknown) => {
          logger.error({ err: error }, 'could not release unfinished job runs; they are taken over when their lease expires');
          return 0;
        });
        logger.warn({ runs: released }, 'released job runs that did not finish within the drain timeout');
      }
      await Promise.race([Promise.all(loops), new Promise((resolve) => setTimeout(resolve, 1_000).unref())]);
      await deleteConsumer(db, options.instanceId).catch(() => undefined);
    },
  };
}
