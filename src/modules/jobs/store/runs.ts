import type { Queryable } from '../../../platform/db/pool.ts';

export const RUNS_CHANNEL = 'backplane_job_runs';

export interface ScheduledSlot {
  job: string;
  slot: Date;
  queue: string;
  maxAttempts: number;
  /** The code default, used when no operator override exists. */
  enabledByDefault: boolean;
}

// The unique (job, slot) key makes every instance's tick for one slot insert one row. The
// definition is read again here so a disable that committed before this statement always wins,
// and a slot is skipped while an earlier run still waits: a busy job never piles up runs.
const insertScheduledRunSql = `
with inserted as (
  insert into job_runs (job, slot, trigger, queue, max_attempts, run_after)
  select $1, $2, 'schedule', $3, $4, $2
  where exists (
      select 1 from job_definitions d
      where d.name = $1 and coalesce(d.enabled, $5) and d.scheduled_since <= $2)
    and not exists (select 1 from job_runs q where q.job = $1 and q.state = 'queued')
  on conflict (job, slot) do nothing
  returning queue
)
select pg_notify('${RUNS_CHANNEL}', queue) from inserted`;

/** True when this call created the slot's run. */
export async function insertScheduledRun(db: Queryable, slot: ScheduledSlot): Promise<boolean> {
  const result = await db.query(insertScheduledRunSql, [slot.job, slot.slot, slot.queue, slot.maxAttempts, slot.enabledByDefault]);
  return result.rowCount === 1;
}

export interface ClaimedRun {
  id: string;
  job: string;
  trigger: 'schedule' | 'manual';
  slot: Date | null;
  attempts: number;
  max_attempts: number;
}

export interface ClaimRequest {
  instanceId: string;
  queues: string[];
  /** Only jobs this instance has code for, so a rolling deploy never hands a run to an instance that cannot run it. */
  jobs: string[];
  leaseSeconds: number;
}

const LEASE_EXPIRED = 'lease_expired: the instance running the last attempt stopped before finishing it';

// Due queued runs, and runs whose instance stopped renewing their lease (taken over while attempts
// remain). A job already running elsewhere is left alone: one run of a job at a time. The attempt
// is recorded with the claim, and an attempt taken over ends as lost.
const claimRunSql = `
with next_run as (
  select r.id from job_runs r
  where r.queue = any($2::text[]) and r.job = any($3::text[])
    and ((r.state = 'queued' and r.run_after <= now())
      or (r.state = 'running' and r.lease_expires_at < now() and r.attempts < r.max_attempts))
    and not exists (select 1 from job_runs o where o.job = r.job and o.state = 'running' and o.id <> r.id)
  order by r.run_after, r.id
  limit 1
  for update of r skip locked
), claimed as (
  update job_runs r
  set state = 'running', attempts = r.attempts + 1, instance_id = $1, started_at = now(), finished_at = null,
      lease_expires_at = now() + make_interval(secs => $4)
  from next_run
  where r.id = next_run.id
  returning r.id, r.job, r.trigger, r.slot, r.attempts, r.max_attempts
), taken_over as (
  update job_run_attempts a set finished_at = now(), outcome = 'lost', error = '${LEASE_EXPIRED}'
  from claimed where a.run_id = claimed.id and a.attempt < claimed.attempts and a.finished_at is null
), attempt as (
  insert into job_run_attempts (run_id, attempt, instance_id)
  select id, attempts, $1 from claimed
  on conflict (run_id, attempt) do update
  set instance_id = excluded.instance_id, started_at = now(), finished_at = null, outcome = null, error = null
)
select id::text, job, trigger, slot, attempts, max_attempts from claimed`;

export async function claimRun(db: Queryable, request: ClaimRequest): Promise<ClaimedRun | undefined> {
  const result = await db.query<ClaimedRun>(claimRunSql, [request.instanceId, request.queues, request.jobs, request.leaseSeconds]);
  return result.rows[0];
}

/** Identifies one attempt: a run taken over or released has moved on, and its old holder writes nothing. */
export interface AttemptKey {
  runId: string;
  instanceId: string;
  attempt: number;
}

const renewLeaseSql = `
update job_runs set lease_expires_at = now() + make_interval(secs => $4)
where id = $1 and instance_id = $2 and attempts = $3 and state = 'running'`;

/** False when the attempt is no longer this instance's. */
export async function renewLease(db: Queryable, key: AttemptKey, leaseSeconds: number): Promise<boolean> {
  const result = await db.query(renewLeaseSql, [key.runId, key.instanceId, key.attempt, leaseSeconds]);
  return result.rowCount === 1;
}

const markRunSucceededSql = `
with done as (
  update job_runs set state = 'succeeded', finished_at = now(), lease_expires_at = null, error = null
  where id = $1 and instance_id = $2 and attempts = $3 and state = 'running'
  returning id, finished_at
), attempt as (
  update job_run_attempts a set finished_at = done.finished_at, outcome = 'succeeded', error = null
  from done where a.run_id = done.id and a.attempt = $3
)
select 1 from done`;

export async function markRunSucceeded(db: Queryable, key: AttemptKey): Promise<boolean> {
  const result = await db.query(markRunSucceededSql, [key.runId, key.instanceId, key.attempt]);
  return result.rowCount === 1;
}

// While attempts remain the run waits 2^attempts seconds (2 s, 4 s, 8 s … at most an hour).
const markRunFailedSql = `
with failed as (
  update job_runs
  set state = case when attempts < max_attempts then 'queued' else 'failed' end,
      run_after = case when attempts < max_attempts
                       then now() + make_interval(secs => least(power(2, attempts), 3600))
                       else run_after end,
      finished_at = case when attempts < max_attempts then null else now() end,
      lease_expires_at = null,
      error = left($4, 500)
  where id = $1 and instance_id = $2 and attempts = $3 and state = 'running'
  returning id, state, run_after, error
), attempt as (
  update job_run_attempts a set finished_at = now(), outcome = 'failed', error = failed.error
  from failed where a.run_id = failed.id and a.attempt = $3
)
select state, run_after from failed`;

export async function markRunFailed(db: Queryable, key: AttemptKey, error: string): Promise<{ state: 'queued' | 'failed'; run_after: Date } | undefined> {
  const result = await db.query<{ state: 'queued' | 'failed'; run_after: Date }>(markRunFailedSql, [key.runId, key.instanceId, key.attempt, error]);
  return result.rows[0];
}

// The attempt did not finish because this instance stopped: it does not count (nor stays listed),
// and the run is due at once for another instance, woken by the notification.
const releaseRunsSql = `
with released as (
  update job_runs
  set state = 'queued', attempts = attempts - 1, lease_expires_at = null, instance_id = null, run_after = now()
  where id = any($1::bigint[]) and instance_id = $2 and state = 'running'
  returning id, attempts, queue
), attempt as (
  delete from job_run_attempts a using released where a.run_id = released.id and a.attempt = released.attempts + 1
)
select pg_notify('${RUNS_CHANNEL}', queue) from released`;

export async function releaseRuns(db: Queryable, runIds: string[], instanceId: string): Promise<number> {
  const result = await db.query(releaseRunsSql, [runIds, instanceId]);
  return result.rowCount ?? 0;
}

const failAbandonedRunsSql = `
with abandoned as (
  update job_runs
  set state = 'failed', finished_at = now(), lease_expires_at = null, error = '${LEASE_EXPIRED}'
  where state = 'running' and lease_expires_at < now() and attempts >= max_attempts
  returning id, attempts
), attempt as (
  update job_run_attempts a set finished_at = now(), outcome = 'lost', error = '${LEASE_EXPIRED}'
  from abandoned where a.run_id = abandoned.id and a.attempt = abandoned.attempts
)
select 1 from abandoned`;

/** Runs whose instance died on their last attempt fail; the others are taken over by claimRun. */
export async function failAbandonedRuns(db: Queryable): Promise<number> {
  return (await db.query(failAbandonedRunsSql)).rowCount ?? 0;
}
