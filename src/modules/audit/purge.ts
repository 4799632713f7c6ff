// Everything that deletes audit events. The retention task threads import this file directly,
// not index.ts, so a thread loads no HTTP or schema code.
import type { Queryable } from '../../platform/db/pool.ts';

/** Monthly partitions are named by their UTC month; nothing else is ever dropped. */
export const AUDIT_PARTITION_NAME = /^audit_events_p\d{6}$/;

const declarePurgeSql = `
select set_config('backplane.audit_purge', 'on', true)`;

// The oldest rows first, as a range: up to the occurred_at of the batch's last row (ties go with
// it), or everything before the cutoff when fewer rows remain. The cutoff prunes every partition
// newer than it, and the range is read from the occurred_at index alone.
const purgeAuditEventsSql = `
delete from audit_events
where occurred_at < $1
  and occurred_at <= coalesce(
    (select occurred_at from audit_events where occurred_at < $1 order by occurred_at offset $2 - 1 limit 1),
    $1)`;

/**
 * The one way to delete audit event rows (the trigger refuses any other): the oldest `batchSize`
 * rows older than the cutoff (a few more when several share the last instant), inside the
 * caller's transaction. Returns how many were deleted; fewer than asked means none are left.
 */
export async function purgeAuditEventBatch(tx: Queryable, before: Date, batchSize: number): Promise<number> {
  if (!Number.isInteger(batchSize) || batchSize < 1) {
    throw new RangeError(`a purge batch is a whole number of rows, at least 1, not ${batchSize}`);
  }
  await tx.query(declarePurgeSql);
  const result = await tx.query(purgeAuditEventsSql, [before, batchSize]);
  return result.rowCount ?? 0;
}

// A partition's upper bound is the first instant of the month after the one in its name.
const selectExpiredPartitionsSql = `
select c.relname as name
from pg_inherits i
join pg_class c on c.oid = i.inhrelid
where i.inhparent = 'audit_events'::regclass
  and c.relname ~ '^audit_events_p[0-9]{6}$'
  and (to_date(substr(c.relname, 15), 'YYYYMM') + interval '1 month') at time zone 'utc' <= $1
order by c.relname`;

/** Monthly partitions whose every possible row is older than the cutoff, oldest first. */
export async function selectExpiredAuditPartitions(db: Queryable, before: Date): Promise<string[]> {
  return (await db.query<{ name: string }>(selectExpiredPartitionsSql, [before])).rows.map((row) => row.name);
}

// Only a purge detaches a month (the partition function creates and attaches in one transaction),
// so a monthly table outside audit_events is one a purge detached and did not get to drop.
const selectDetachedPartitionsSql = `
select c.relname as name
from pg_class c
where c.relkind = 'r'
  and c.relnamespace = (select relnamespace from pg_class where oid = 'audit_events'::regclass)
  and c.relname ~ '^audit_events_p[0-9]{6}$'
  and not c.relispartition
  and (to_date(substr(c.relname, 15), 'YYYYMM') + interval '1 month') at time zone 'utc' <= $1
order by c.relname`;

/** Expired months detached from audit_events by an earlier purge that stopped before dropping them. */
export async function selectDetachedAuditPartitions(db: Queryable, before: Date): Promise<string[]> {
  return (await db.query<{ name: string }>(selectDetachedPartitionsSql, [before])).rows.map((row) => row.name);
}

function partitionIdentifier(name: string): string {
  if (!AUDIT_PARTITION_NAME.test(name)) {
    throw new Error(`${name} is not a monthly audit event partition`);
  }
  return `"${name}"`;
}

/** Counts a month's rows: those of a detached month are what its drop removes. */
export async function countAuditPartition(db: Queryable, name: string): Promise<number> {
  const result = await db.query<{ rows: string }>(`select count(*) as rows from ${partitionIdentifier(name)}`);
  return Number(result.rows[0]!.rows);
}

/**
 * Takes a monthly partition out of audit_events: its rows leave the table at commit. It locks
 * audit_events and its default partition ACCESS EXCLUSIVE until the transaction ends, only for
 * catalogue changes (no rows are read): run it under a short lock_timeout and commit at once.
 * The detached table keeps its rows but no longer the append-only row triggers; drop it next.
 */
export async function detachAuditPartition(tx: Queryable, name: string): Promise<void> {
  await tx.query(`alter table audit_events detach partition ${partitionIdentifier(name)}`);
}

/**
 * Drops a detached month, freeing its files. It locks only that table and its indexes, so it can
 * take its time (tens of milliseconds per month on a durable disk) beside the service's queries.
 */
export async function dropAuditPartition(db: Queryable, name: string): Promise<void> {
  await db.query(`drop table ${partitionIdentifier(name)}`);
}
