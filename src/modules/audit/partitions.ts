import type pg from 'pg';
import { withTransaction } from '../../platform/db/transaction.ts';

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
