import type { Queryable } from '../../platform/db/pool.ts';

export interface InstanceRecord {
  instanceId: string;
  version: string;
  commit: string | undefined;
  buildTime: string | undefined;
  modified: boolean;
  runtimeVersion: string;
  host: string;
  pid: number;
}

const insertInstanceSql = `
insert into release_instances (instance_id, version, commit, build_time, modified, runtime_version, host, pid)
values ($1, $2, $3, $4, $5, $6, $7, $8)
on conflict (instance_id) do update set last_seen_at = now(), stopped_at = null`;

export async function registerInstance(db: Queryable, record: InstanceRecord): Promise<void> {
  await db.query(insertInstanceSql, [
    record.instanceId,
    record.version,
    record.commit ?? null,
    record.buildTime ?? null,
    record.modified,
    record.runtimeVersion,
    record.host,
    record.pid,
  ]);
}

// One statement per beat: the touch and the count of running instances. The count reads the
// snapshot before the touch, so this instance counts itself by its id, whatever its last beat.
const beatInstanceSql = `
with touched as (
  update release_instances set last_seen_at = now() where instance_id = $1 and stopped_at is null
  returning instance_id
)
select exists (select 1 from touched) as touched,
       1 + (select count(*)::int from release_instances
            where stopped_at is null and last_seen_at > now() - make_interval(secs => $2) and instance_id <> $1) as running`;

/**
 * Touches this instance's row and counts running instances (not stopped, seen within
 * `staleAfterSeconds`, on the database clock) on every host. `touched` is false when the row is
 * gone (pruned, or the table restored), so the caller re-registers.
 */
export async function beatInstance(db: Queryable, instanceId: string, staleAfterSeconds: number): Promise<{ touched: boolean; running: number }> {
  const result = await db.query<{ touched: boolean; running: number }>(beatInstanceSql, [instanceId, staleAfterSeconds]);
  return result.rows[0]!;
}

const stopInstanceSql = `
update release_instances set stopped_at = now(), last_seen_at = now() where instance_id = $1`;

export async function markInstanceStopped(db: Queryable, instanceId: string): Promise<void> {
  await db.query(stopInstanceSql, [instanceId]);
}

export interface InstanceRow {
  id: string;
  instance_id: string;
  version: string;
  commit: string | null;
  build_time: Date | null;
  modified: boolean;
  runtime_version: string;
  host: string;
  pid: number;
  started_at: Date;
  last_seen_at: Date;
  stopped_at: Date | null;
  running: boolean;
}

// Newest first by the id column (its text alias would sort 10 before 9). Running: not stopped and seen within three heartbeats, judged on the database clock.
const selectInstancesSql = `
select id::text, instance_id, version, commit, build_time, modified, runtime_version, host, pid,
       started_at, last_seen_at, stopped_at,
       (stopped_at is null and last_seen_at > now() - make_interval(secs => $1)) as running
from release_instances
where ($2::bigint is null or id < $2)
  and ($3::boolean is null
       or $3 = (stopped_at is null and last_seen_at > now() - make_interval(secs => $1)))
order by release_instances.id desc
limit $4`;

export interface InstancePageQuery {
  staleAfterSeconds: number;
  /** Rows are numbered in start order, so the id alone is the keyset. */
  afterId: string | undefined;
  running: boolean | undefined;
  limit: number;
}

export async function selectInstances(db: Queryable, query: InstancePageQuery): Promise<InstanceRow[]> {
  const result = await db.query<InstanceRow>(selectInstancesSql, [
    query.staleAfterSeconds,
    query.afterId ?? null,
    query.running ?? null,
    query.limit,
  ]);
  return result.rows;
}
