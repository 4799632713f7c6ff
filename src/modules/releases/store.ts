import type { RuntimeSnapshot } from './runtimeSnapshot.ts';
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

/** Where an instance announces that it registered or that its count changed, so the others beat at once. */
export const INSTANCES_CHANNEL = 'release_instances';

// Counted from 0 again: the others may have stopped counting a row that went missing (ADR 0020, "The count").
const insertInstanceSql = `
with registered as (
  insert into release_instances (instance_id, version, commit, build_time, modified, runtime_version, host, pid)
  values ($1, $2, $3, $4, $5, $6, $7, $8)
  on conflict (instance_id) do update set last_seen_at = now(), stopped_at = null, counted = 0
  returning instance_id
)
select pg_notify('${INSTANCES_CHANNEL}', instance_id) from registered`;

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

// One statement per beat: writes the count this instance holds (never more than it reads now), then
// reads the running rows from the snapshot before the write. Running: not stopped, seen within
// $2 seconds of this instance's previous beat, so rows of instances that beat before a long
// outage still count after it. Announces a changed count, so the others beat now rather than later.
const beatInstanceSql = `
with me as (
  select last_seen_at as previous from release_instances where instance_id = $1 and stopped_at is null
), others as (
  select other.counted, other.last_seen_at > coalesce($4::timestamptz, me.previous) as beat_since
  from release_instances other, me
  where other.stopped_at is null and other.instance_id <> $1 and other.last_seen_at > me.previous - make_interval(secs => $2)
), tally as (
  select 1 + count(*)::int as running, min(counted) as least_counted, coalesce(bool_and(beat_since), true) as others_beat_since from others
), touched as (
  update release_instances set last_seen_at = now(), counted = least(coalesce($3::int, 0), (select running from tally))
  where instance_id = $1 and stopped_at is null
  returning counted
)
select exists (select 1 from touched) as touched, now()::text as beaten_at, tally.running,
       least((select counted from touched), tally.least_counted) as least_counted, tally.others_beat_since,
       (select count(*) from (select pg_notify('${INSTANCES_CHANNEL}', $1) where $3::int is distinct from tally.running) announced)::int as announced
from tally`;

export interface InstanceBeat {
  /** False when the row is gone (pruned, or the table restored) or marked stopped: the caller registers again. */
  touched: boolean;
  /** Running instances, this one included. */
  running: number;
  /** The least count in the running rows, this one's as just written included. */
  leastCounted: number;
  /** Every other running row has beaten since `countedSince` (or, without it, this instance's previous beat). */
  othersBeatSince: boolean;
  /** This beat's time on the database clock, as text so that no microsecond is lost: the `countedSince` of the beats after a registration's first. */
  beatenAt: string;
}

/**
 * Touches this instance's row, writing `counted` (the count it holds; undefined before its first
 * count), and reads how many instances run on every host and what they counted (ADR 0020, "The
 * count"), on the database clock. `countedSince` is the time of this instance's first beat
 * after it registered: a beat of another row started after it read this row.
 */
export async function beatInstance(
  db: Queryable,
  instanceId: string,
  staleAfterSeconds: number,
  counted: number | undefined,
  countedSince?: string,
): Promise<InstanceBeat> {
  const result = await db.query<{ touched: boolean; beaten_at: string; running: number; least_counted: number | null; others_beat_since: boolean }>(
    beatInstanceSql,
    [instanceId, staleAfterSeconds, counted ?? null, countedSince ?? null],
  );
  const row = result.rows[0]!;
  return {
    touched: row.touched,
    running: row.running,
    leastCounted: row.least_counted ?? 0,
    othersBeatSince: row.others_beat_since,
    beatenAt: row.beaten_at,
  };
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
  runtime: RuntimeSnapshot | null;
}

// Newest first by the id column (its text alias would sort 10 before 9). Running: not stopped and seen within three heartbeats, judged on the database clock.
const selectInstancesSql = `
select id::text, instance_id, version, commit, build_time, modified, runtime_version, host, pid,
       started_at, last_seen_at, stopped_at, runtime,
       (stopped_at is null and last_seen_at > now() - make_interval(secs => $1)) as running
from release_instances
where ($2::bigint is null or id < $2)
  and ($3::boolean is null
       or $3 = (stopped_at is null and last_seen_at > now() - make_interval(secs => $1)))
order by release_instances.id desc
limit $4`;

// Only columns of the first release_instances: `backplane upgrade` counts running instances on the schema it is about to migrate.
const countRunningInstancesSql = `
select count(*)::int as running
from release_instances
where stopped_at is null and last_seen_at > now() - make_interval(secs => $1)`;

export async function countRunningInstances(db: Queryable, staleAfterSeconds: number): Promise<number> {
  const result = await db.query<{ running: number }>(countRunningInstancesSql, [staleAfterSeconds]);
  return result.rows[0]!.running;
}

export interface InstancePageQuery {
  staleAfterSeconds: number;
  /** Rows are numbered in start order, so the id alone is the keyset. */
  afterId: string | undefined;
  running: boolean | undefined;
  limit: number;
}

export async function selectInstances(db: Queryable, query: InstancePageQuery): Promise<InstanceRow[]> {
  const result = await db.query<InstanceRow>(selectInstancesSql, [query.staleAfterSeconds, query.afterId ?? null, query.running ?? null, query.limit]);
  return result.rows;
}

const writeRuntimeSql = `update release_instances set runtime = $2 where instance_id = $1`;

/** The instance's latest runtime snapshot, beside its heartbeat (a second statement, so the beat's count stays as it is). */
export async function writeRuntimeSnapshot(db: Queryable, instanceId: string, snapshot: RuntimeSnapshot): Promise<void> {
  await db.query(writeRuntimeSql, [instanceId, JSON.stringify(snapshot)]);
}
