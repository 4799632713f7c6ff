import { context as otelContext } from '@opentelemetry/api';
import type { Logger } from 'pino';
import type { Queryable } from '../../platform/db/pool.ts';
import type { RunTask } from '../../platform/tasks/pool.ts';
import type { JobContext, RegisteredJob } from './definitions.ts';
import { JobLeaseLostError, JobShutdownError, JobTimeoutError, summarizeError } from './errorSummary.ts';
import type { JobMetrics } from './metrics.ts';
import { startRunSpan } from './runSpan.ts';
import { type AttemptKey, type ClaimedRun, markRunFailed, markRunSucceeded, renewLease } from './store/runs.ts';
import { untilAborted } from '../../platform/untilAborted.ts';

export interface ExecuteDeps {
  db: Queryable;
  runTask: RunTask;
  logger: Logger;
  metrics: JobMetrics;
  instanceId: string;
  leaseSeconds: number;
}

/** One attempt in progress on this instance. */
export interface Execution {
  readonly runId: string;
  /** Settles once the outcome is written (or deliberately not: lost, or left for the drain to release). */
  readonly done: Promise<void>;
  /** Stops the attempt as the instance drains; the caller releases the run afterwards. */
  stopForShutdown(): void;
}

/**
 * Runs one attempt: renews the lease while it runs, aborts it at its timeout or when the lease is
 * lost, and writes the outcome only while the attempt is still this instance's.
 */
export function executeRun(deps: ExecuteDeps, job: RegisteredJob, claimed: ClaimedRun): Execution {
  const controller = new AbortController();
  const key: AttemptKey = { runId: claimed.id, instanceId: deps.instanceId, attempt: claimed.attempts };
  const logger = deps.logger.child({ job: job.name, run_id: claimed.id, attempt: claimed.attempts });
  const context: JobContext = {
    db: deps.db,
    runTask: (task, input, options) => deps.runTask(task, input, { signal: options?.signal ?? controller.signal }),
    signal: controller.signal,
    logger,
    run: { id: claimed.id, job: job.name, trigger: claimed.trigger, slot: claimed.slot, attempt: claimed.attempts, maxAttempts: claimed.max_attempts },
  };

  const renew = async () => {
    try {
      if (!(await renewLease(deps.db, key, deps.leaseSeconds))) {
        controller.abort(new JobLeaseLostError());
      }
    } catch (error) {
      logger.warn({ err: error }, 'could not renew the lease of a job run; retrying');
    }
  };

  const span = startRunSpan(job, claimed);
  // Everything the attempt does, its outcome's statements and log lines included, runs under its span.
  const done = otelContext.with(span.context, async () => {
    const started = performance.now();
    const timeout = setTimeout(() => controller.abort(new JobTimeoutError(job.timeoutSeconds)), job.timeoutSeconds * 1000);
    const renewal = setInterval(() => void renew(), (deps.leaseSeconds * 1000) / 3);
    let failure: unknown;
    let succeeded = false;
    try {
      await untilAborted(
        Promise.resolve().then(() => job.handler(context)),
        controller.signal,
      );
      succeeded = true;
    } catch (error) {
      failure = error;
    } finally {
      clearTimeout(timeout);
      clearInterval(renewal);
    }
    const seconds = (performance.now() - started) / 1000;
    const reason: unknown = controller.signal.reason;
    if (!succeeded && reason instanceof JobLeaseLostError) {
      deps.metrics.attemptEnded(job.name, 'lost', seconds);
      span.end('lost');
      logger.warn('another instance took the job run over; this attempt stopped');
      return;
    }
    if (!succeeded && reason instanceof JobShutdownError) {
      deps.metrics.attemptEnded(job.name, 'released', seconds);
      span.end('released');
      return;
    }
    try {
      if (succeeded) {
        if (await markRunSucceeded(deps.db, key)) {
          deps.metrics.attemptEnded(job.name, 'succeeded', seconds);
          span.end('succeeded');
          logger.info({ duration_ms: Math.round(seconds * 1000) }, 'job run succeeded');
        } else {
          deps.metrics.attemptEnded(job.name, 'lost', seconds);
          span.end('lost');
          logger.warn('the job run finished after it had been taken over or released; its outcome is not recorded');
        }
        return;
      }
      const result = await markRunFailed(deps.db, key, summarizeError(failure));
      if (result) {
        const retrying = result.state === 'queued';
        deps.metrics.attemptEnded(job.name, retrying ? 'retrying' : 'failed', seconds);
        span.end(reason instanceof JobTimeoutError ? 'timed_out' : retrying ? 'retrying' : 'failed', failure, retrying);
        logger[retrying ? 'warn' : 'error'](
          { err: failure, ...(retrying ? { retry_at: result.run_after.toISOString() } : {}) },
          retrying ? 'job attempt failed; the run will retry' : 'job run failed after its last attempt',
        );
      } else {
        span.end('lost', failure);
      }
    } catch (error) {
      // The lease lapses and another instance runs the attempt again.
      span.end('unrecorded', succeeded ? error : failure);
      logger.error({ err: error }, 'could not record the outcome of a job run');
    }
  });

  return {
    runId: claimed.id,
    done,
    stopForShutdown: () => controller.abort(new JobShutdownError()),
  };
}
