// Keeps audit_event_rollup in step with audit_events. The retention task threads may import this
// file directly, so it loads no HTTP or schema code.
import type { Queryable } from '../../platform/db/pool.ts';

// Folds and partition subtractions take turns (fold_audit_event_rollup takes the same lock): a
// fold still holding deltas of a month would otherwise add them back after the month was subtracted.
const lockRollupSql = `select pg_advisory_xact_lock(hashtextextended('backplane.audit_event_rollup', 0))`;

const foldSql = `select fold_audit_event_rollup() as touched`;

/** The audit_rollup job: folds the pending deltas into the hourly rollup; returns how many groups it touched. */
export async function foldAuditRollup(db: Queryable): Promise<number> {
  return Number((await db.query<{ touched: string }>(foldSql)).rows[0]!.touched);
}

// A monthly partition holds exactly the events of its UTC month, so its counts are the rollup's
// hours of that month.
const forgetMonthSql = (table: string, column: string) => `
delete from ${table}
where ${column} >= to_date(substr($1, 15), 'YYYYMM')::timestamp at time zone 'utc'
  and ${column} < (to_date(substr($1, 15), 'YYYYMM') + interval '1 month')::timestamp at time zone 'utc'`;

/**
 * Takes a monthly partition's events out of the rollup. Call it in the transaction that detaches the
 * partition, after the detach (which waits out the writers of audit_events first, so no lock order
 * can deadlock): both commit or neither does. Row deletes need nothing: a trigger counts them.
 */
export async function subtractAuditPartitionFromRollup(tx: Queryable, name: string): Promise<void> {
  if (!/^audit_events_p\d{6}$/.test(name)) {
    throw new Error(`${name} is not a monthly audit event partition`);
  }
  await tx.query(lockRollupSql);
  await tx.query(forgetMonthSql('audit_event_rollup', 'hour'), [name]);
  await tx.query(forgetMonthSql('audit_event_rollup_daily', 'day'), [name]);
  await tx.query(forgetMonthSql('audit_event_rollup_deltas', 'hour'), [name]);
}
