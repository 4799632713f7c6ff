import type { Queryable } from '../../platform/db/pool.ts';

/** Where a kind of data stands against its retention, on the database clock. */
export interface KindAge {
  cutoff: Date;
  /** The oldest row retention judges; null when there is none. */
  oldest: Date | null;
  pastCutoff: number;
}

interface AgeRow {
  cutoff: Date;
  oldest: Date | null;
  past_cutoff: string;
}

async function age(db: Queryable, sql: string, seconds: number): Promise<KindAge> {
  const row = (await db.query<AgeRow>(sql, [seconds])).rows[0]!;
  return { cutoff: row.cutoff, oldest: row.oldest, pastCutoff: Number(row.past_cutoff) };
}

const auditEventsAgeSql = `
select now() - make_interval(secs => $1) as cutoff,
       (select min(occurred_at) from audit_events) as oldest,
       (select count(*) from audit_events where occurred_at < now() - make_interval(secs => $1)) as past_cutoff`;

export const selectAuditEventsAge = (db: Queryable, seconds: number) => age(db, auditEventsAgeSql, seconds);

const settingsHistoryAgeSql = `
select now() - make_interval(secs => $1) as cutoff,
       (select min(changed_at) from settings_history) as oldest,
       (select count(*) from settings_history where changed_at < now() - make_interval(secs => $1)) as past_cutoff`;

export const selectSettingsHistoryAge = (db: Queryable, seconds: number) => age(db, settingsHistoryAgeSql, seconds);

const jobDefinitionHistoryAgeSql = `
select now() - make_interval(secs => $1) as cutoff,
       (select min(changed_at) from job_definition_history) as oldest,
       (select count(*) from job_definition_history where changed_at < now() - make_interval(secs => $1)) as past_cutoff`;

export const selectJobDefinitionHistoryAge = (db: Queryable, seconds: number) => age(db, jobDefinitionHistoryAgeSql, seconds);

// Only finished runs are retention's: queued and running ones stay whatever their age.
const jobRunsAgeSql = `
select now() - make_interval(secs => $1) as cutoff,
       (select min(created_at) from job_runs where state in ('succeeded', 'failed')) as oldest,
       (select count(*) from job_runs
        where state in ('succeeded', 'failed') and created_at < now() - make_interval(secs => $1)) as past_cutoff`;

export const selectJobRunsAge = (db: Queryable, seconds: number) => age(db, jobRunsAgeSql, seconds);

// Stopping an instance sets last_seen_at too: one column ages stopped and silent instances alike.
const releaseInstancesAgeSql = `
select now() - make_interval(secs => $1) as cutoff,
       (select min(last_seen_at) from release_instances) as oldest,
       (select count(*) from release_instances where last_seen_at < now() - make_interval(secs => $1)) as past_cutoff`;

export const selectReleaseInstancesAge = (db: Queryable, seconds: number) => age(db, releaseInstancesAgeSql, seconds);

const selectCutoffsSql = `
select now() - make_interval(secs => u.seconds) as cutoff
from unnest($1::float8[]) with ordinality as u(seconds, position)
order by u.position`;

/** now() minus each retention, in the order given: one database instant for the whole run. */
export async function selectCutoffs(db: Queryable, seconds: number[]): Promise<Date[]> {
  return (await db.query<{ cutoff: Date }>(selectCutoffsSql, [seconds])).rows.map((row) => row.cutoff);
}

const setStatementTimeoutSql = `select set_config('statement_timeout', $1, true)`;

/** Bounds every later statement of the transaction. */
export async function setStatementTimeout(tx: Queryable, ms: number): Promise<void> {
  await tx.query(setStatementTimeoutSql, [`${ms}ms`]);
}
