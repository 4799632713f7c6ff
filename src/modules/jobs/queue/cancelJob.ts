import type { Queryable } from '../../../platform/db/pool.ts';
import { type JobState, QUEUE_CANCEL_CHANNEL } from './channels.ts';

// An unfinished job ends as cancelled. A running one also tells, at commit, the instance that holds
// it, which aborts the handler's signal; its outcome is then no longer written (the attempt is not
// this instance's any more), and a transactional handler's writes roll back.
const cancelJobSql = `
with target as (
  select id, state from queue_jobs
  where id = $1 and state in ('available', 'scheduled', 'retryable', 'running')
  for update
), cancelled as (
  update queue_jobs j
  set state = 'cancelled', finalized_at = now(), locked_by = null, locked_until = null
  from target
  where j.id = target.id
  returning j.id, target.state as previous
)
select previous, case when previous = 'running' then pg_notify('${QUEUE_CANCEL_CHANNEL}', id::text) end as told
from cancelled`;

/**
 * Cancels a job that has not finished; returns the state it was in, or undefined when it does not
 * exist or had already finished.
 */
export async function cancelJob(db: Queryable, id: string): Promise<JobState | undefined> {
  const result = await db.query<{ previous: JobState }>(cancelJobSql, [id]);
  return result.rows[0]?.previous;
}
