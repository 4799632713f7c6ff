import type pg from 'pg';
import type { Queryable } from '../../platform/db/pool.ts';
import { withTransaction } from '../../platform/db/transaction.ts';

/** Monthly partitions are named by their UTC month; nothing else is ever dropped. */
export const AUDIT_PARTITION_NAME = /^audit_events_p\d{6}$/;

/** How far ahead of the database's now partitions are kept, so new events never land in the default partition. */
export const PARTITION_MONTHS_AHEAD = 3;

const ensurePartitionsSql = `
select ensure_audit_event_partitions(now(), now() + make_interval(months => $1)) as created`;

const setLockTimeoutSql = `select set_config('lock_timeout', $1, true)`;

// Attaching waits for readers of the default partition, and while it waits new readers queue behind it.
const ENSURE_LOCK_TIMEOUT_MS = 2_000;

/**
 * Creates the missing monthly partitions from this month to `monthsAhead` months on (database
 * clock), moving rows of those months out of the default partition. Returns how many it created.
 * Gives up with lock_not_available rather than queue readers for long; the next call retries.
 */
export async function ensureAuditEventPartitions(pool: pg.Pool, monthsAhead = PARTITION_MONTHS_AHEAD): Promise<number> {
  return withTransaction(pool, async (tx) => {
    await tx.query(setLockTimeoutSql, [`${ENSURE_LOCK_TIMEOUT_MS}ms`]);
    return (await tx.query<{ created: number }>(ensurePartitionsSql, [monthsAhead])).rows[0]!.created;
  });
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
