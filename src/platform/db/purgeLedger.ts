// The purge ledger: what committed batches deleted and no audit event reports yet. Task threads
// write it (with each batch, in its transaction); the job reads it back when it reports a kind.
import type { Queryable } from './pool.ts';

/** Whose rows a purge deletes: the kind's public name, and the job run when a job runs it. */
export interface PurgeLedgerKey {
  /** The kind of data (`AgingTarget.kind`). */
  kind: string;
  /** Null (or absent) for a purge run outside a job. */
  runId?: string | null;
}

const insertPurgedSql = `
insert into purge_ledger (kind, run_id, rows, partitions_dropped) values ($1, $2, $3, $4)`;

/** Notes a batch's (or a dropped month's) rows inside the transaction that deleted them, so both commit or neither. */
export async function recordPurged(tx: Queryable, key: PurgeLedgerKey, rows: number, partitionsDropped = 0): Promise<void> {
  if (rows > 0 || partitionsDropped > 0) {
    await tx.query(insertPurgedSql, [key.kind, key.runId ?? null, rows, partitionsDropped]);
  }
}

export interface SettledPurge {
  rows: number;
  partitionsDropped: number;
}

// Every run's entries for the kind: rows deleted by an attempt that died before reporting them
// are reported by the next one that does, once, as the delete takes them out of the ledger.
const settlePurgedSql = `
with settled as (
  delete from purge_ledger where kind = $1 returning rows, partitions_dropped
)
select coalesce(sum(rows), 0)::text as rows, coalesce(sum(partitions_dropped), 0)::int as partitions_dropped from settled`;

/** Takes the kind's unreported rows out of the ledger; run it in the transaction that records their audit event. */
export async function settlePurged(tx: Queryable, kind: string): Promise<SettledPurge> {
  const row = (await tx.query<{ rows: string; partitions_dropped: number }>(settlePurgedSql, [kind])).rows[0]!;
  return { rows: Number(row.rows), partitionsDropped: row.partitions_dropped };
}

const selectUnreportedSql = `
select kind, sum(rows)::text as rows from purge_ledger group by kind`;

// `backplane upgrade` reads the retention overview before it migrates, on a schema without the ledger.
const ledgerExistsSql = `select to_regclass('purge_ledger') is not null as exists`;

/** Rows deleted per kind whose audit event is still to be written (by the next attempt or run); none before the ledger's migration. */
export async function selectUnreportedPurges(db: Queryable): Promise<Map<string, number>> {
  if (!(await db.query<{ exists: boolean }>(ledgerExistsSql)).rows[0]!.exists) {
    return new Map();
  }
  const { rows } = await db.query<{ kind: string; rows: string }>(selectUnreportedSql);
  return new Map(rows.map((row) => [row.kind, Number(row.rows)]));
}
