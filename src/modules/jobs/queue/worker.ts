import type pg from 'pg';
import type { Logger } from 'pino';
import type { NotificationListener } from '../../../platform/db/listener.ts';
import type { RunTask } from '../../../platform/tasks/pool.ts';
import { JobLeaseLostError, JobShutdownError } from '../errorSummary.ts';
import { QUEUE_CANCEL_CHANNEL, QUEUE_JOBS_CHANNEL } from './channels.ts';
import { type ClaimedJob, claimJobs } from './claimJobs.ts';
import { createCompletionBatch } from './completionBatch.ts';
import { discardAbandonedJobs } from './discardAbandonedJobs.ts';
import { JobCancelledError } from './errors.ts';
import type { QueueTaskRegistry } from './queueTask.ts';
import { releaseJobs } from './releaseJobs.ts';
import { renewLeases } from './renewLeases.ts';
import { type AttemptOutcome, type JobExecution, runJob } from './runJob.ts';

export interface QueueWorkerOptions {
  /** The instance's pool: claims, outcomes, and a connection per running transactional job. */
  pool: pg.Pool;
  listener: NotificationListener;
  tasks: QueueTaskRegistry;
  logger: Logger;
  runTask: RunTask;
  instanceId: string;
  /** Jobs run at once per queue on this instance; the queues listed are the ones it works. */
  concurrency: Readonly<Record<string, number>>;
  /**
   * Jobs claimed ahead per queue beyond those running, so a freed slot starts the next job without
   * a round trip (the fast setting for short jobs). They hold their lease while they wait, and a
   * job added later at a higher priority waits behind them. Default 0.
   */
  prefetch?: number;
  /** How long a claimed job is this instance's without renewal. Default 30. */
  leaseSeconds?: number;
  /** Longest wait between claims without a notification (the fallback when one is lost). Default 1000. */
  pollMs?: number;
  /** Told each attempt's outcome (metrics, tests). */
  onAttempt?: (job: { id: string; task: string; attempt: number }, outcome: AttemptOutcome) => void;
  random?: () => number;
}

export interface DrainResult {
  /** Attempts that finished within the budget. */
  finished: number;
  /** Attempts stopped at the end of the budget and given back without counting. */
  released: number;
}

export interface QueueWorker {
  /** Jobs running on this instance now, by queue. */
  running(): Record<string, number>;
  /** Jobs claimed ahead and not started yet, by queue. */
  waiting(): Record<string, number>;
  /**
   * Stops claiming, lets running attempts finish within timeoutMs, then aborts the rest and gives
   * them back as available (no attempt spent) for another instance.
   */
  drain(timeoutMs: number): Promise<DrainResult>;
}

const STOP_GRACE_MS = 1_000;

/**
 * Claims jobs as soon as their transaction commits (NOTIFY), or at the latest every pollMs, up to
 * each queue's free slots (and its prefetch) in one statement; renews every held lease in one statement; completes in
 * batches (completionBatch.ts).
 */
export function startQueueWorker(options: QueueWorkerOptions): QueueWorker {
  const { pool, logger, instanceId } = options;
  const leaseSeconds = options.leaseSeconds ?? 30;
  const queues = Object.keys(options.concurrency);
  const executions = new Map<string, JobExecution>();
  const runningIn = new Map<string, number>(queues.map((queue) => [queue, 0]));
  // Queues that may hold due jobs beyond the last claim: told by a notification, or the last claim filled every slot asked.
  const mayHaveMore = new Set<string>(queues);
  const completions = createCompletionBatch(pool, instanceId);
  const taskNames = options.tasks.names();
  let stopping = false;
  let claiming = false;
  let claimAgain = false;
  let failing = false;

  const prefetch = options.prefetch ?? 0;
  const waiting = new Map<string, ClaimedJob[]>(queues.map((queue) => [queue, []]));
  const capacity = (queue: string) => options.concurrency[queue]! + prefetch;
  // A busy queue claims once a quarter of its room is free, so a claim takes several jobs, not
  // one per job finished; an idle one claims for a single job at once.
  const claimAt = (queue: string) => Math.max(1, Math.floor(capacity(queue) / 4));
  const freeSlots = () =>
    new Map(
      queues
        .map((queue) => [queue, capacity(queue) - runningIn.get(queue)! - waiting.get(queue)!.length] as const)
        .filter(([queue, free]) => free > 0 && (free >= claimAt(queue) || runningIn.get(queue)! + waiting.get(queue)!.length === 0)),
    );
  const heldKeys = () => [
    ...[...executions.values()].map((execution) => execution.key),
    ...[...waiting.values()].flat().map((job) => ({ id: job.id, attempt: job.attempts })),
  ];
  const dropWaiting = (id: string) => {
    for (const jobs of waiting.values()) {
      const index = jobs.findIndex((job) => job.id === id);
      if (index >= 0) {
        jobs.splice(index, 1);
      }
    }
  };

  function startWaiting(queue: string): void {
    const jobs = waiting.get(queue)!;
    while (!stopping && jobs.length > 0 && runningIn.get(queue)! < options.concurrency[queue]!) {
      start(jobs.shift()!);
    }
  }

  function start(job: ClaimedJob): void {
    runningIn.set(job.queue, runningIn.get(job.queue)! + 1);
    const task = options.tasks.get(job.task)!;
    const execution = runJob({ pool, instanceId, runTask: options.runTask, logger, completions, random: options.random ?? Math.random }, task, job, {
      // The slot is free as soon as the handler is: the next job starts while this outcome is written.
      handlerSettled: () => {
        runningIn.set(job.queue, runningIn.get(job.queue)! - 1);
        startWaiting(job.queue);
        if (mayHaveMore.has(job.queue)) {
          void fill();
        }
      },
      ended: (outcome) => {
        // This instance may have taken its own job over after a stall longer than the lease: the newer attempt stays listed.
        if (executions.get(job.id) === execution) {
          executions.delete(job.id);
        }
        options.onAttempt?.({ id: job.id, task: job.task, attempt: job.attempts }, outcome);
      },
    });
    executions.set(job.id, execution);
  }

  async function fill(): Promise<void> {
    if (claiming) {
      claimAgain = true;
      return;
    }
    claiming = true;
    try {
      do {
        claimAgain = false;
        const slots = freeSlots();
        if (stopping || slots.size === 0) {
          break;
        }
        slots.forEach((_free, queue) => mayHaveMore.delete(queue));
        const claimed = await claimJobs(pool, { instanceId, slots, tasks: taskNames, leaseSeconds });
        if (failing) {
          failing = false;
          logger.info('claiming queue jobs works again');
        }
        if (stopping) {
          // Drain began while the claim ran: give these back untouched.
          await releaseJobs(
            pool,
            instanceId,
            claimed.map((job) => ({ id: job.id, attempt: job.attempts })),
          );
          break;
        }
        claimed.forEach((job) => waiting.get(job.queue)!.push(job));
        slots.forEach((_free, queue) => startWaiting(queue));
        for (const [queue, free] of slots) {
          if (claimed.filter((job) => job.queue === queue).length === free) {
            mayHaveMore.add(queue);
          }
        }
      } while (claimAgain);
    } catch (error) {
      if (!failing) {
        failing = true;
        logger.warn({ err: error }, 'claiming queue jobs failed; retrying at the next poll');
      }
    } finally {
      claiming = false;
    }
  }

  async function renew(): Promise<void> {
    try {
      const statuses = await renewLeases(pool, instanceId, heldKeys(), leaseSeconds);
      for (const [id, status] of statuses) {
        // The cancel's notification may not have come (a listener reconnecting): the renewal tells as well.
        if (status !== 'held') {
          dropWaiting(id);
          executions.get(id)?.stop(status === 'cancelled' ? new JobCancelledError() : new JobLeaseLostError());
        }
      }
    } catch (error) {
      logger.warn({ err: error }, 'could not renew the leases of queue jobs; retrying');
    }
  }

  const wake = (queue: string) => {
    if (runningIn.has(queue) && !stopping) {
      mayHaveMore.add(queue);
      void fill();
    }
  };
  options.listener.listen(QUEUE_JOBS_CHANNEL, wake);
  options.listener.listen(QUEUE_CANCEL_CHANNEL, (id) => {
    dropWaiting(id);
    executions.get(id)?.stop(new JobCancelledError());
  });
  options.listener.onConnected(() => queues.forEach(wake));
  const poll = setInterval(() => {
    queues.forEach(wake);
    void discardAbandonedJobs(pool).catch(() => undefined);
  }, options.pollMs ?? 1_000);
  const renewal = setInterval(() => void renew(), (leaseSeconds * 1000) / 3);
  void fill();

  return {
    running: () => Object.fromEntries(runningIn),
    waiting: () => Object.fromEntries([...waiting].map(([queue, jobs]) => [queue, jobs.length])),
    async drain(timeoutMs) {
      stopping = true;
      clearInterval(poll);
      const notStarted = [...waiting.values()].flatMap((jobs) => jobs.splice(0)).map((job) => ({ id: job.id, attempt: job.attempts }));
      const inFlight = [...executions.values()];
      const deadline = new Promise<void>((resolve) => setTimeout(resolve, timeoutMs).unref());
      await Promise.race([Promise.all(inFlight.map((execution) => execution.done)), deadline]);
      const unfinished = [...executions.values()];
      unfinished.forEach((execution) => execution.stop(new JobShutdownError()));
      // A handler that ignores its signal is not waited for past the grace: its attempt is given back all the same.
      const grace = new Promise<void>((resolve) => setTimeout(resolve, STOP_GRACE_MS).unref());
      await Promise.race([Promise.all(unfinished.map((execution) => execution.done)), grace]);
      clearInterval(renewal);
      const released = await releaseJobs(pool, instanceId, [...notStarted, ...unfinished.map((execution) => execution.key)]).catch((error: unknown) => {
        logger.error({ err: error }, 'could not release unfinished queue jobs; they are taken over when their lease ends');
        return 0;
      });
      if (released > 0) {
        logger.warn({ jobs: released }, 'released queue jobs that did not finish within the drain budget');
      }
      return { finished: inFlight.length - unfinished.length, released: Math.max(0, released - notStarted.length) };
    },
  };
}
