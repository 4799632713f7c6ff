import type { z } from 'zod';
import { withTransaction } from '../../platform/db/transaction.ts';
import { JobsError, jobNotFound } from './errors.ts';
import type { JobsServiceDeps } from './ports.ts';
import type { Run } from './schemas.ts';
import { insertManualRun, lockRunRequests, notifyRunQueued, selectRunRequestState } from './store/runRequests.ts';
import { runView } from './views.ts';

/**
 * Queues a run now, unless the job is disabled, or a run is queued or running, or the last run
 * finished less than a minute ago: an operator cannot stack runs of a job.
 */
export async function requestRun(
  deps: JobsServiceDeps,
  name: string,
  by: { accountId: string | null; requestId: string | null },
): Promise<z.infer<typeof Run>> {
  const job = deps.jobs.get(name);
  if (!job) {
    throw jobNotFound(name);
  }
  return withTransaction(deps.pool, async (tx) => {
    await lockRunRequests(tx, job.name);
    const state = await selectRunRequestState(tx, job.name, job.enabled);
    if (!state.enabled) {
      throw new JobsError('job_definition_disabled', 'The job is disabled; enable it before asking for a run.');
    }
    if (state.in_progress) {
      throw new JobsError('job_run_limited', 'A run of this job is already queued or running.');
    }
    if (state.wait_seconds > 0) {
      throw new JobsError('job_run_limited', 'The last run of this job finished less than a minute ago.', {
        headers: { 'Retry-After': String(state.wait_seconds) },
      });
    }
    const run = await insertManualRun(tx, {
      job: job.name,
      queue: job.queue,
      maxAttempts: job.maxAttempts,
      requestedBy: by.accountId,
      requestId: by.requestId,
    });
    await notifyRunQueued(tx, job.queue);
    return runView(run);
  });
}
