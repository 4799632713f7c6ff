import type { z } from 'zod';
import type { ChangedBy } from '../../platform/caller.ts';
import { withTransaction } from '../../platform/db/transaction.ts';
import { JobsError, jobNotFound } from './errors.ts';
import type { JobsServiceDeps } from './ports.ts';
import { runNotFound } from './runDetail.ts';
import type { Run } from './schemas.ts';
import { lockRun } from './store/attempts.ts';
import { insertManualRun, lockRunRequests, notifyRunQueued, selectRunRequestState } from './store/runRequests.ts';
import { runView } from './views.ts';

/**
 * Queues a new manual run of a failed run's job, with a reason, audited as `jobs.run.retried`.
 * Unlike a plain run request it does not wait a minute after the failure; it is still refused
 * while a run of the job is queued or running, or the job is disabled.
 */
export async function retryRun(deps: JobsServiceDeps, id: string, reasonText: string | undefined, by: ChangedBy): Promise<z.infer<typeof Run>> {
  const reason = reasonText?.trim();
  if (!reason) {
    throw new JobsError('job_reason_required', 'A reason is required to retry a job run.');
  }
  return withTransaction(deps.pool, async (tx) => {
    const failed = await lockRun(tx, id);
    if (!failed) {
      throw runNotFound(id);
    }
    if (failed.state !== 'failed') {
      throw new JobsError('job_run_not_failed', `Run ${id} is ${failed.state}; only a failed run can be retried.`);
    }
    const job = deps.jobs.get(failed.job);
    if (!job) {
      throw jobNotFound(failed.job);
    }
    await lockRunRequests(tx, job.name);
    const state = await selectRunRequestState(tx, job.name, job.enabled);
    if (!state.enabled) {
      throw new JobsError('job_definition_disabled', 'The job is disabled; enable it before retrying a run.');
    }
    if (state.in_progress) {
      throw new JobsError('job_run_limited', 'A run of this job is already queued or running.');
    }
    const run = await insertManualRun(tx, {
      job: job.name,
      queue: job.queue,
      maxAttempts: job.maxAttempts,
      requestedBy: by.actor.kind === 'account' ? by.actor.id : null,
      requestId: by.requestId ?? null,
    });
    await notifyRunQueued(tx, job.queue);
    await deps.recordAudit(tx, {
      actor: by.actor,
      action: 'jobs.run.retried',
      resource: { type: 'job_run', id: run.id },
      outcome: 'success',
      requestId: by.requestId,
      clientAddress: by.clientAddress,
      userAgent: by.userAgent,
      metadata: { job: job.name, retry_of: failed.id, reason },
    });
    return runView(run);
  });
}
