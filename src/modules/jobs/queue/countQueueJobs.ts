import type { Queryable } from '../../../platform/db/pool.ts';

/** One queue's counts, as the jobs overview shows them. */
export interface QueueCounts {
  queue: string;
  available: number;
  scheduled: number;
  retryable: number;
  running: number;
  /** Discarded in the last 24 hours. */
  discarded_last_day: number;
  /** When the longest-waiting due job became due; null when none is due. */
  oldest_due_at: Date | null;
}

// Unfinished jobs only, each part matching the predicate of its partial index (claim, lease), and
// the last day's discards through (state, finalized_at): the cost follows the backlog and the
// discards, never the history of finished jobs.
// A scheduled or retryable job already due counts as available, as a worker would see it.
// Run inside the caller's bounded read (boundedRead.ts), as the overview's other reads.
const countQueueJobsSql = `
with unfinished as (
  select queue,
         case when state <> 'available' and run_at <= now() then 'available' else state end as state,
         case when run_at <= now() then run_at end as due_at
  from queue_jobs
  where state in ('available', 'scheduled', 'retryable')
  union all
  select queue, state, null from queue_jobs where state = 'running'
), discarded as (
  select queue, count(*)::int as jobs from queue_jobs
  where finalized_at > now() - interval '1 day' and state = 'discarded'
  group by queue
), counted as (
  select queue,
         count(*) filter (where state = 'available')::int as available,
         count(*) filter (where state = 'scheduled')::int as scheduled,
         count(*) filter (where state = 'retryable')::int as retryable,
         count(*) filter (where state = 'running')::int as running,
         min(due_at) as oldest_due_at
  from unfinished
  group by queue
)
select coalesce(c.queue, d.queue) as queue,
       coalesce(c.available, 0) as available, coalesce(c.scheduled, 0) as scheduled,
       coalesce(c.retryable, 0) as retryable, coalesce(c.running, 0) as running,
       coalesce(d.jobs, 0) as discarded_last_day, c.oldest_due_at
from counted c full join discarded d on d.queue = c.queue
order by 1`;

/** Counts every queue's jobs by state in one grouped read. */
export async function countQueueJobs(db: Queryable): Promise<QueueCounts[]> {
  return (await db.query<QueueCounts>(countQueueJobsSql)).rows;
}
