import type { StatementRunner } from './statementRunner.ts';
import { QUEUE_JOBS_CHANNEL } from './channels.ts';
import { type AttemptKey, inIdOrder } from './completeJobs.ts';

// The attempts did not finish because this instance stops: they do not count, and the jobs are
// available at once to the other instances, woken at commit.
const releaseJobsSql = `
with released as (
  update queue_jobs j
  set state = 'available', attempts = j.attempts - 1, run_at = now(), locked_by = null, locked_until = null
  from unnest($1::bigint[], $2::int[]) as held(id, attempt)
  where j.id = held.id and j.attempts = held.attempt and j.locked_by = $3 and j.state = 'running'
  returning j.queue
)
select (select count(*) from released)::int as released,
       (select count(pg_notify('${QUEUE_JOBS_CHANNEL}', q.queue)) from (select distinct queue from released) q) as woken`;

/** Gives held attempts back, as if never claimed; returns how many were still this instance's. */
export async function releaseJobs(db: StatementRunner, instanceId: string, attempts: readonly AttemptKey[]): Promise<number> {
  if (attempts.length === 0) {
    return 0;
  }
  const sorted = inIdOrder(attempts);
  const result = await db.query<{ released: number }>({
    name: 'queue_release_jobs',
    text: releaseJobsSql,
    values: [sorted.map((a) => a.id), sorted.map((a) => a.attempt), instanceId],
  });
  return result.rows[0]?.released ?? 0;
}
