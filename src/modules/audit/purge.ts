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

function partitionIdentifier(name: string): string {
  if (!AUDIT_PARTITION_NAME.test(name)) {
    throw new Error(`${name} is not a monthly audit event partition`);
  }
  return `"${name}"`;
}

/**
 * Locks a monthly partition against writes until the transaction ends (reads go on) and counts
 * its rows, so the count is exactly what a drop in the same transaction removes.
 */
export async function lockAndCountAuditPartition(tx: Queryable, name: string): Promise<number> {
  const table = partitionIdentifier(name);
  await tx.query(`lock table ${table} in share mode`);
  const result = await tx.query<{ rows: string }>(`select count(*) as rows from ${table}`);
  return Number(result.rows[0]!.rows);
}

/**
 * Drops a monthly partition. It takes an ACCESS EXCLUSIVE lock on audit_events until the
 * transaction ends: run it under a short lock_timeout and commit at once.
 */
export async function dropAuditPartition(tx: Queryable, name: string): Promise<void> {
  await tx.query(`drop table ${partitionIdentifier(name)}`);
}
