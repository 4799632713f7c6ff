import type { Queryable } from '../../platform/db/pool.ts';
import type { SettingJson } from './values.ts';

/** Who made a change, as recorded with it. */
export interface ChangeActor {
  kind: string;
  id: string;
  label: string;
}

export interface StoredSetting {
  name: string;
  /** As stored; validated against the declaration when read into memory. */
  value: unknown;
  version: number;
  updatedAt: Date;
  updatedBy: string;
}

interface StoredRow {
  name: string;
  value: unknown;
  version: number;
  updated_at: Date;
  updated_by: string;
}

const toStored = (row: StoredRow): StoredSetting => ({
  name: row.name,
  value: row.value,
  version: row.version,
  updatedAt: row.updated_at,
  updatedBy: row.updated_by,
});

const selectStoredSettingsSql = `
select name, value, version, updated_at, updated_by from settings_values`;

export async function selectStoredSettings(db: Queryable): Promise<StoredSetting[]> {
  const result = await db.query<StoredRow>(selectStoredSettingsSql);
  return result.rows.map(toStored);
}

// Serialises writers of one setting, including its first write, when no row exists to lock yet.
const lockSettingSql = `
select pg_advisory_xact_lock(hashtextextended('backplane.settings:' || $1, 0))`;

export async function lockSetting(tx: Queryable, name: string): Promise<void> {
  await tx.query(lockSettingSql, [name]);
}

const selectStoredSettingSql = `
select name, value, version, updated_at, updated_by from settings_values where name = $1`;

export async function selectStoredSetting(db: Queryable, name: string): Promise<StoredSetting | undefined> {
  const result = await db.query<StoredRow>(selectStoredSettingSql, [name]);
  return result.rows[0] ? toStored(result.rows[0]) : undefined;
}

const upsertSettingSql = `
insert into settings_values (name, value, version, updated_by_kind, updated_by_id, updated_by)
values ($1, $2::jsonb, 1, $3, $4, $5)
on conflict (name) do update
  set value = excluded.value,
      version = settings_values.version + 1,
      updated_at = now(),
      updated_by_kind = excluded.updated_by_kind,
      updated_by_id = excluded.updated_by_id,
      updated_by = excluded.updated_by
returning name, value, version, updated_at, updated_by`;

export async function upsertSetting(tx: Queryable, name: string, value: SettingJson, actor: ChangeActor): Promise<StoredSetting> {
  const result = await tx.query<StoredRow>(upsertSettingSql, [name, JSON.stringify(value), actor.kind, actor.id, actor.label]);
  return toStored(result.rows[0]!);
}

export interface SettingChangeRecord {
  name: string;
  oldValue: SettingJson;
  newValue: SettingJson;
  version: number;
  reason: string;
  actor: ChangeActor;
  requestId: string;
}

const insertSettingChangeSql = `
insert into settings_history (name, old_value, new_value, version, reason, actor_kind, actor_id, actor_label, request_id)
values ($1, $2::jsonb, $3::jsonb, $4, $5, $6, $7, $8, $9)
returning id::text`;

export async function insertSettingChange(tx: Queryable, change: SettingChangeRecord): Promise<string> {
  const result = await tx.query<{ id: string }>(insertSettingChangeSql, [
    change.name,
    JSON.stringify(change.oldValue),
    JSON.stringify(change.newValue),
    change.version,
    change.reason,
    change.actor.kind,
    change.actor.id,
    change.actor.label,
    change.requestId,
  ]);
  return result.rows[0]!.id;
}

export interface SettingChangeRow {
  id: string;
  name: string;
  old_value: SettingJson;
  new_value: SettingJson;
  version: number;
  reason: string;
  actor_kind: string;
  actor_id: string;
  actor_label: string;
  request_id: string;
  changed_at: Date;
}

// Newest first; the id is the keyset (the column, not its text alias, which would sort 10 before 9).
const selectSettingChangesSql = `
select id::text, name, old_value, new_value, version, reason, actor_kind, actor_id, actor_label, request_id, changed_at
from settings_history
where name = $1 and ($2::bigint is null or id < $2)
order by settings_history.id desc
limit $3`;

export async function selectSettingChanges(db: Queryable, name: string, beforeId: string | undefined, limit: number): Promise<SettingChangeRow[]> {
  const result = await db.query<SettingChangeRow>(selectSettingChangesSql, [name, beforeId ?? null, limit]);
  return result.rows;
}
