import type { Queryable } from '../../../platform/db/pool.ts';
import { PG, pgCode } from '../../../platform/db/pgErrors.ts';
import { QUEUE_JOBS_CHANNEL } from './channels.ts';
import { QueueError } from './errors.ts';

// An operator's retry: a job waiting for its backoff, discarded or cancelled runs now, with one
// more attempt when it had spent them all. Its errors stay, so the next attempt's join them.
const retryJobSql = `
with retried as (
  update queue_jobs
  set state = 'available', run_at = now(), finalized_at = null, max_attempts = least(greatest(max_attempts, attempts + 1), 100)
  where id = $1 and state in ('retryable', 'discarded', 'cancelled')
  returning queue
), woken as (
  select count(pg_notify('${QUEUE_JOBS_CHANNEL}', queue)) as queues from retried
)
select 1 from retried cross join woken`;

/**
 * Makes a retryable, discarded or cancelled job available now. Refused with `job_not_retryable`
 * when it is in another state, or when an unfinished job holds its key; false when no job has the id.
 */
export async function retryJob(db: Queryable, id: string): Promise<boolean> {
  let retried: number;
  try {
    retried = (await db.query(retryJobSql, [id])).rowCount ?? 0;
  } catch (error) {
    if (pgCode(error) === PG.uniqueViolation) {
      throw new QueueError('job_not_retryable', 'Another job with the same key is waiting or running.');
    }
    throw error;
  }
  if (retried === 1) {
    return true;
  }
  const exists = await db.query('select 1 from queue_jobs where id = $1', [id]);
  if (exists.rowCount === 0) {
    return false;
  }
  throw new QueueError('job_not_retryable', 'Only a retryable, discarded or cancelled job can be retried.');
}
