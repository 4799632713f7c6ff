import type { Queryable } from '../../../platform/db/pool.ts';
import { RUNS_CHANNEL } from './runs.ts';
import { type RunRow, RUN_COLUMNS } from './reads.ts';

const lockRunRequestsSql = `select pg_advisory_xact_lock(hashtextextended('backplane_job_run_request:' || $1, 0))`;

/** Serialises run requests for one job until the transaction ends, so two requests cannot both pass the limit. */
export async function lockRunRequests(tx: Queryable, job: string): Promise<void> {
  await tx.query(lockRunRequestsSql, [job]);
}

export interface RunRequestState {
  enabled: boolean;
  in_progress: boolean;
  /** Seconds until a minute has passed since the last run finished; 0 when it has. */
  wait_seconds: number;
}

const selectRunRequestStateSql = `
select
  coalesce((select d.enabled from job_definitions d where d.name = $1), $2) as enabled,
  exists (select 1 from job_runs r where r.job = $1 and r.state in ('queued', 'running')) as in_progress,
  coalesce((
    select greatest(0, ceil(extract(epoch from (r.finished_at + interval '1 minute' - now()))))::int
    from job_runs r where r.job = $1 and r.finished_at is not null
    order by r.id desc limit 1), 0) as wait_seconds`;

export async function selectRunRequestState(tx: Queryable, job: string, enabledByDefault: boolean): Promise<RunRequestState> {
  return (await tx.query<RunRequestState>(selectRunRequestStateSql, [job, enabledByDefault])).rows[0]!;
}

export interface ManualRun {
  job: string;
  queue: string;
  maxAttempts: number;
  requestedBy: string | null;
  requestId: string | null;
}

const insertManualRunSql = `
insert into job_runs (job, trigger, queue, max_attempts, requested_by, request_id)
values ($1, 'manual', $2, $3, $4, $5)
returning ${RUN_COLUMNS}`;

export async function insertManualRun(tx: Queryable, run: ManualRun): Promise<RunRow> {
  const result = await tx.query<RunRow>(insertManualRunSql, [run.job, run.queue, run.maxAttempts, run.requestedBy, run.requestId]);
  return result.rows[0]!;
}

const notifyRunQueuedSql = `select pg_notify('${RUNS_CHANNEL}', $1)`;

/** Wakes the workers consuming the queue, at commit. */
export async function notifyRunQueued(tx: Queryable, queue: string): Promise<void> {
  await tx.query(notifyRunQueuedSql, [queue]);
}
