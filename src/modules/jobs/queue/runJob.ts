import type pg from 'pg';
import type { Logger } from 'pino';
import type { RunTask } from '../../../platform/tasks/pool.ts';
import { JobLeaseLostError, JobShutdownError, JobTimeoutError, summarizeError } from '../errorSummary.ts';
import { backoffSeconds } from './backoff.ts';
import type { ClaimedJob } from './claimJobs.ts';
import type { CompletionBatch } from './completionBatch.ts';
import { type AttemptKey, completeJobs } from './completeJobs.ts';
import { GiveUpJob, JobCancelledError, RetryJobLater } from './errors.ts';
import { failJob, retryJobLater } from './failJob.ts';
import type { QueueJobContext, RegisteredQueueTask } from './queueTask.ts';
import { runInTransaction } from './runInTransaction.ts';
import { untilAborted } from '../../../platform/untilAborted.ts';

export interface RunJobDeps {
  pool: pg.Pool;
  instanceId: string;
  runTask: RunTask;
  logger: Logger;
  completions: CompletionBatch;
  random: () => number;
}

/** One attempt of one job in progress on this instance. */
export interface JobExecution {
  readonly key: AttemptKey;
  readonly queue: string;
  /** Settles once the outcome is written, or deliberately not (cancelled, taken over, left for the drain to release). */
  readonly done: Promise<void>;
  /** Aborts the handler's signal: timeout, cancel, lost lease, or the end of the drain. */
  stop(reason: Error): void;
}

export type AttemptOutcome = 'completed' | 'retryable' | 'discarded' | 'retry_later' | 'released' | 'cancelled' | 'lost' | 'unrecorded';

/**
 * Runs one attempt: the handler under the task's timeout, then its outcome written only while the
 * attempt is still this instance's. A transactional task's handler runs in the transaction that
 * completes the job (runInTransaction.ts); the others' completions go in batches.
 */
export interface RunJobHooks {
  /** The handler settled: its slot is free while the outcome is still being written. */
  handlerSettled(): void;
  /** The outcome is written (or deliberately not). */
  ended(outcome: AttemptOutcome): void;
}

export function runJob(deps: RunJobDeps, task: RegisteredQueueTask, claimed: ClaimedJob, hooks: RunJobHooks): JobExecution {
  const controller = new AbortController();
  const key: AttemptKey = { id: claimed.id, attempt: claimed.attempts };
  const logger = deps.logger.child({ task: task.name, job_id: claimed.id, attempt: claimed.attempts });
  const context = (payload: unknown, db: QueueJobContext<unknown>['db']): QueueJobContext<unknown> => ({
    payload,
    db,
    signal: controller.signal,
    runTask: (work, input, options) => deps.runTask(work, input, { signal: options?.signal ?? controller.signal }),
    logger,
    job: { id: claimed.id, task: task.name, queue: claimed.queue, attempt: claimed.attempts, maxAttempts: claimed.max_attempts },
  });

  let handlerDone = false;
  const settled = () => {
    if (!handlerDone) {
      handlerDone = true;
      hooks.handlerSettled();
    }
  };

  async function attempt(): Promise<AttemptOutcome> {
    // Checked again as it runs: a payload added before the schema changed is discarded, not run half-valid.
    const parsed = task.payload.safeParse(claimed.payload);
    if (!parsed.success) {
      return (await failJob(deps.pool, deps.instanceId, key, {
        message: 'invalid_job_payload: the payload no longer matches the task schema',
        retryInSeconds: 0,
        giveUp: true,
      }))
        ? 'discarded'
        : 'lost';
    }
    const timeout = setTimeout(() => controller.abort(new JobTimeoutError(task.timeoutSeconds)), task.timeoutSeconds * 1000);
    let failure: unknown;
    try {
      if (task.transactional) {
        await runInTransaction(deps.pool, controller.signal, async (tx) => {
          await task.handler(context(parsed.data, tx));
          if (!(await completeJobs(tx, deps.instanceId, [key])).has(key.id)) {
            // Cancelled or taken over meanwhile: the handler's writes roll back with the attempt.
            throw new JobLeaseLostError();
          }
        });
        return 'completed';
      }
      await untilAborted(
        Promise.resolve().then(() => task.handler(context(parsed.data, deps.pool))),
        controller.signal,
      );
    } catch (error) {
      failure = error;
    } finally {
      clearTimeout(timeout);
      settled();
    }
    if (failure === undefined) {
      return (await deps.completions.complete(key)) ? 'completed' : 'lost';
    }
    const reason: unknown = controller.signal.reason;
    if (reason instanceof JobShutdownError) {
      return 'released';
    }
    if (reason instanceof JobCancelledError) {
      return 'cancelled';
    }
    if (reason instanceof JobLeaseLostError || failure instanceof JobLeaseLostError) {
      return 'lost';
    }
    if (failure instanceof RetryJobLater) {
      return (await retryJobLater(deps.pool, deps.instanceId, key, failure.seconds)) ? 'retry_later' : 'lost';
    }
    const giveUp = failure instanceof GiveUpJob;
    const failed = await failJob(deps.pool, deps.instanceId, key, {
      message: summarizeError(reason instanceof JobTimeoutError ? reason : failure),
      retryInSeconds: backoffSeconds(task.backoff, claimed.attempts, deps.random),
      giveUp,
    });
    if (failed) {
      logger[failed.state === 'retryable' ? 'warn' : 'error'](
        { err: failure, state: failed.state },
        failed.state === 'retryable' ? 'job attempt failed; the job will retry' : 'job discarded',
      );
    }
    return failed?.state ?? 'lost';
  }

  const done = attempt().then(
    (outcome) => {
      settled();
      hooks.ended(outcome);
    },
    (error: unknown) => {
      // The lease lapses and another instance runs the attempt again.
      logger.error({ err: error }, 'could not record the outcome of a job attempt');
      settled();
      hooks.ended('unrecorded');
    },
  );
  return { key, queue: claimed.queue, done, stop: (reason) => controller.abort(reason) };
}
