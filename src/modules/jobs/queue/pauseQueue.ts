import type { Queryable } from '../../../platform/db/pool.ts';
import { QUEUE_JOBS_CHANNEL } from './channels.ts';

export interface QueueRow {
  name: string;
  paused: boolean;
  paused_at: Date | null;
  pause_reason: string | null;
  created_at: Date;
  updated_at: Date;
}

// A queue without a row runs; pausing makes its row. Running jobs finish: only claims stop.
const pauseQueueSql = `
insert into job_queues (name, paused, paused_at, pause_reason)
values ($1, true, now(), $2)
on conflict (name) do update
set paused = true, paused_at = coalesce(job_queues.paused_at, now()), pause_reason = excluded.pause_reason, updated_at = now()
returning *`;

export async function pauseQueue(db: Queryable, name: string, reason: string | null): Promise<QueueRow> {
  return (await db.query<QueueRow>(pauseQueueSql, [name, reason])).rows[0]!;
}

// Resumed, the queue's waiting jobs are claimed at once: the workers are woken at commit.
const resumeQueueSql = `
with resumed as (
  insert into job_queues (name, paused)
  values ($1, false)
  on conflict (name) do update
  set paused = false, paused_at = null, pause_reason = null, updated_at = now()
  returning *
), woken as (
  select count(pg_notify('${QUEUE_JOBS_CHANNEL}', name)) as queues from resumed
)
select resumed.* from resumed cross join woken`;

export async function resumeQueue(db: Queryable, name: string): Promise<QueueRow> {
  return (await db.query<QueueRow>(resumeQueueSql, [name])).rows[0]!;
}
