import type { StatementRunner } from './statementRunner.ts';
import { appendedErrorsSql } from './errorLog.ts';

export interface ClaimRequest {
  instanceId: string;
  /** How many jobs each queue may hand this worker now: its free slots. Paused queues hand none. */
  slots: ReadonlyMap<string, number>;
  /** Only tasks this instance has code for, so a rolling deploy never hands a job to an instance that cannot run it. */
  tasks: readonly string[];
  leaseSeconds: number;
}

/** A job this worker holds for one attempt: the lease is its until renewed or finished. */
export interface ClaimedJob {
  id: string;
  task: string;
  queue: string;
  payload: unknown;
  /** This attempt's number, from 1. */
  attempts: number;
  max_attempts: number;
  created_at: Date;
}

export const LEASE_EXPIRED = 'lease_expired: the instance running the attempt stopped renewing its lease';

// Per queue asked for and not paused: first the jobs whose lease has passed (their instance died;
// only while attempts remain, discardAbandonedJobs ends the others), then the due jobs by priority,
// due time and id, each through its partial index and `for update skip locked`, so concurrent
// claims of every instance take disjoint jobs without waiting on one another. A pause that
// commits while a claim runs stops the next claim.
const claimJobsSql = `
with wanted as (
  select w.queue, w.slots
  from unnest($2::text[], $3::int[]) as w(queue, slots)
  where w.slots > 0 and not exists (select 1 from job_queues p where p.name = w.queue and p.paused)
), expired as (
  select e.id, w.queue
  from wanted w cross join lateral (
    select j.id from queue_jobs j
    where j.state = 'running' and j.locked_until < now() and j.queue = w.queue
      and j.attempts < j.max_attempts and j.task = any($4::text[])
    order by j.locked_until
    limit w.slots
    for update skip locked
  ) e
), due as (
  select d.id
  from wanted w cross join lateral (
    select j.id from queue_jobs j
    where j.queue = w.queue and j.state in ('available', 'scheduled', 'retryable') and j.run_at <= now()
      and j.task = any($4::text[])
    order by j.priority, j.run_at, j.id
    limit greatest(w.slots - (select count(*) from expired e where e.queue = w.queue), 0)
    for update skip locked
  ) d
), picked as (
  select id from expired union all select id from due
), claimed as (
  update queue_jobs j
  set state = 'running', attempts = j.attempts + 1, locked_by = $1,
      locked_until = now() + make_interval(secs => $5), attempted_at = now(),
      errors = case when j.state = 'running' then ${appendedErrorsSql('j.errors', 'j.attempts', `'${LEASE_EXPIRED}'`)} else j.errors end
  from picked
  where j.id = picked.id
  returning j.id, j.task, j.queue, j.payload, j.attempts, j.max_attempts, j.created_at, j.priority, j.run_at
)
select id::text, task, queue, payload, attempts, max_attempts, created_at from claimed
order by priority, run_at, id`;

/** Takes up to each queue's free slots of claimable jobs in one statement. */
export async function claimJobs(db: StatementRunner, request: ClaimRequest): Promise<ClaimedJob[]> {
  const queues = [...request.slots.keys()];
  if (queues.length === 0 || request.tasks.length === 0) {
    return [];
  }
  const result = await db.query<ClaimedJob>({
    name: 'queue_claim_jobs',
    text: claimJobsSql,
    values: [request.instanceId, queues, queues.map((queue) => request.slots.get(queue)), request.tasks, request.leaseSeconds],
  });
  return result.rows;
}
