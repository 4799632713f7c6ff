import type { Queryable } from '../../../platform/db/pool.ts';

/** A job's row: operators' overrides (null = code default) and when its slots start counting. */
export interface DefinitionRow {
  name: string;
  enabled: boolean | null;
  schedule: string | null;
  scheduled_since: Date | null;
  version: number;
  updated_at: Date | null;
  updated_by: string | null;
  db_now: Date;
}

const ensureJobsKnownSql = `
insert into job_definitions (name)
select unnest($1::text[])
on conflict (name) do nothing`;

/** Records jobs the first time any instance sees them, so their slots count from then, not from the past. */
export async function ensureJobsKnown(db: Queryable, names: string[]): Promise<void> {
  await db.query(ensureJobsKnownSql, [names]);
}

// One row per job asked for, known or not, each with the database clock.
const selectDefinitionRowsSql = `
select j.name, d.enabled, d.schedule, d.scheduled_since, coalesce(d.version, 0) as version,
       d.updated_at, d.updated_by, now() as db_now
from unnest($1::text[]) with ordinality as j(name, position)
left join job_definitions d on d.name = j.name
order by j.position`;

export async function selectDefinitionRows(db: Queryable, names: string[]): Promise<DefinitionRow[]> {
  return (await db.query<DefinitionRow>(selectDefinitionRowsSql, [names])).rows;
}

const lockDefinitionSql = `
select name, enabled, schedule, scheduled_since, version, updated_at, updated_by, now() as db_now
from job_definitions where name = $1
for update`;

/** Locks a job's row for a change, creating it first when no instance has seen the job yet. */
export async function lockDefinition(tx: Queryable, name: string): Promise<DefinitionRow> {
  await ensureJobsKnown(tx, [name]);
  return (await tx.query<DefinitionRow>(lockDefinitionSql, [name])).rows[0]!;
}

export interface DefinitionUpdate {
  name: string;
  enabled: boolean | null;
  schedule: string | null;
  /** Re-enabling or rescheduling starts the slots afresh: what was missed meanwhile does not run. */
  restartSlots: boolean;
  updatedBy: string;
}

const updateDefinitionSql = `
update job_definitions
set enabled = $2, schedule = $3, version = version + 1, updated_at = now(), updated_by = $4,
    scheduled_since = case when $5 then now() else scheduled_since end
where name = $1
returning name, enabled, schedule, scheduled_since, version, updated_at, updated_by, now() as db_now`;

export async function updateDefinition(tx: Queryable, update: DefinitionUpdate): Promise<DefinitionRow> {
  const result = await tx.query<DefinitionRow>(updateDefinitionSql, [update.name, update.enabled, update.schedule, update.updatedBy, update.restartSlots]);
  return result.rows[0]!;
}

export interface DefinitionChange {
  job: string;
  version: number;
  before: { enabled: boolean; schedule: string };
  after: { enabled: boolean; schedule: string };
  reason: string;
  actorId: string | null;
  actorLabel: string | null;
  requestId: string | null;
  clientAddress: string | null;
  userAgent: string | null;
}

const insertDefinitionHistorySql = `
insert into job_definition_history
  (job, version, old_config, new_config, reason, actor_id, actor_label, request_id, client_address, user_agent)
values ($1, $2, $3, $4, $5, $6, $7, $8, $9, left($10, 512))`;

export async function insertDefinitionHistory(tx: Queryable, change: DefinitionChange): Promise<void> {
  await tx.query(insertDefinitionHistorySql, [
    change.job,
    change.version,
    JSON.stringify(change.before),
    JSON.stringify(change.after),
    change.reason,
    change.actorId,
    change.actorLabel,
    change.requestId,
    change.clientAddress,
    change.userAgent,
  ]);
}

export const DEFINITIONS_CHANNEL = 'backplane_job_definitions';

const notifyDefinitionChangedSql = `select pg_notify('${DEFINITIONS_CHANNEL}', $1)`;

/** Delivered at commit: every instance's scheduler ticks at once instead of at its next beat. */
export async function notifyDefinitionChanged(tx: Queryable, name: string): Promise<void> {
  await tx.query(notifyDefinitionChangedSql, [name]);
}

export interface DefinitionHistoryRow {
  id: string;
  job: string;
  version: number;
  old_config: { enabled: boolean; schedule: string };
  new_config: { enabled: boolean; schedule: string };
  reason: string;
  actor_id: string | null;
  actor_label: string | null;
  request_id: string | null;
  changed_at: Date;
}

const selectDefinitionHistorySql = `
select id::text, job, version, old_config, new_config, reason, actor_id, actor_label, request_id, changed_at
from job_definition_history
where job = $1 and ($2::bigint is null or id < $2)
order by id desc
limit $3`;

/** A job's changes, newest first, in keyset pages on the (job, id desc) index. */
export async function selectDefinitionHistory(db: Queryable, job: string, beforeId: string | undefined, limit: number): Promise<DefinitionHistoryRow[]> {
  return (await db.query<DefinitionHistoryRow>(selectDefinitionHistorySql, [job, beforeId ?? null, limit])).rows;
}
