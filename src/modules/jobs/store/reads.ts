import type { Queryable } from '../../../platform/db/pool.ts';
import { CONSUMER_STALE_SECONDS } from './consumers.ts';

export const RUN_STATES = ['queued', 'running', 'succeeded', 'failed'] as const;
export type RunState = (typeof RUN_STATES)[number];

export interface RunRow {
  id: string;
  job: string;
  trigger: 'schedule' | 'manual';
  slot: Date | null;
  queue: string;
  state: RunState;
  attempts: number;
  max_attempts: number;
  run_after: Date;
  lease_expires_at: Date | null;
  instance_id: string | null;
  requested_by: string | null;
  error: string | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

export const RUN_COLUMNS = `id::text, job, trigger, slot, queue, state, attempts, max_attempts, run_after,
  lease_expires_at, instance_id, requested_by, error, created_at, started_at, finished_at`;

export interface RunFilter {
  job: string | undefined;
  state: RunState | undefined;
  /** Keyset: runs with a smaller id. */
  beforeId: string | undefined;
  limit: number;
}

// Ordered by the table's column: a bare `id` would name the output column `id::text` and sort as text.
const selectRunsSql = `
select ${RUN_COLUMNS}
from job_runs r
where ($1::text is null or r.job = $1)
  and ($2::text is null or r.state = $2)
  and ($3::bigint is null or r.id < $3)
order by r.id desc
limit $4`;

/** Newest first. */
export async function selectRuns(db: Queryable, filter: RunFilter): Promise<RunRow[]> {
  const result = await db.query<RunRow>(selectRunsSql, [filter.job ?? null, filter.state ?? null, filter.beforeId ?? null, filter.limit]);
  return result.rows;
}

// Per job, its newest run that has started at least once, from the partial (job, id desc) index in
// one entry however old that run is. One branch per job with its name as a value the planner sees:
// behind a join it guesses an average job and walks the primary key backwards through every newer
// run of the other jobs instead.
const lastRunBranch = (parameter: number) => `(
  select r.job, r.id::text, r.trigger, r.state, r.attempts, r.error, r.started_at, r.finished_at, r.instance_id
  from job_runs r where r.job = $${parameter} and r.started_at is not null order by r.id desc limit 1)`;

export interface LastRunRow {
  job: string;
  id: string;
  trigger: 'schedule' | 'manual';
  state: RunState;
  attempts: number;
  error: string | null;
  started_at: Date;
  finished_at: Date | null;
  instance_id: string | null;
}

export async function selectLastRuns(db: Queryable, jobs: string[]): Promise<LastRunRow[]> {
  if (jobs.length === 0) {
    return [];
  }
  return (await db.query<LastRunRow>(jobs.map((_, index) => lastRunBranch(index + 1)).join('\nunion all\n'), jobs)).rows;
}

const selectRecentCountsSql = `
select job, state, count(*)::int as count
from job_runs
where created_at > now() - interval '24 hours'
group by job, state`;

export async function selectRecentCounts(db: Queryable): Promise<Array<{ job: string; state: RunState; count: number }>> {
  return (await db.query<{ job: string; state: RunState; count: number }>(selectRecentCountsSql)).rows;
}

// Served by the partial index on (queue, state) of queued and running runs: never the finished ones.
const selectQueueLoadSql = `
select queue, state, count(*)::int as count
from job_runs
where state in ('queued', 'running')
group by queue, state`;

export async function selectQueueLoad(db: Queryable): Promise<Array<{ queue: string; state: 'queued' | 'running'; count: number }>> {
  return (await db.query<{ queue: string; state: 'queued' | 'running'; count: number }>(selectQueueLoadSql)).rows;
}

const selectLiveConsumersSql = `
select instance_id, queues, workers
from job_consumers
where seen_at > now() - make_interval(secs => ${CONSUMER_STALE_SECONDS})
order by started_at, instance_id`;

export async function selectLiveConsumers(db: Queryable): Promise<Array<{ instance_id: string; queues: string[]; workers: number }>> {
  return (await db.query<{ instance_id: string; queues: string[]; workers: number }>(selectLiveConsumersSql)).rows;
}

// Per job, when its latest success and failure finished among its last 1000 runs, through the (job,
// id) index, so a job that never fails costs 1000 index entries, not its whole history. One branch
// per job with its name as a value the planner sees, as for the last runs above.
const lastFinishBranch = (parameter: number) => `(
  select $${parameter}::text as job,
         max(r.finished_at) filter (where r.state = 'succeeded') as last_success,
         max(r.finished_at) filter (where r.state = 'failed') as last_failure
  from (select state, finished_at from job_runs where job = $${parameter} order by id desc limit 1000) r)`;

export interface LastFinishRow {
  job: string;
  last_success: Date | null;
  last_failure: Date | null;
}

export async function selectLastFinishes(db: Queryable, jobs: string[]): Promise<LastFinishRow[]> {
  if (jobs.length === 0) {
    return [];
  }
  return (await db.query<LastFinishRow>(jobs.map((_, index) => lastFinishBranch(index + 1)).join('\nunion all\n'), jobs)).rows;
}
