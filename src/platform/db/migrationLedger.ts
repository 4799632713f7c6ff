import type pg from 'pg';
import { PG, pgCode } from './pgErrors.ts';

// Whether the ledger has the column recording how each migration ran (added by this release's runner).
const hasTransactionalColumnSql = `
select exists (
  select 1 from pg_attribute where attrelid = to_regclass('schema_migrations') and attname = 'transactional' and not attisdropped
) as found`;

// Rows the previous release's runner writes leave it out: theirs all ran in a transaction.
const addTransactionalColumnSql = `
alter table schema_migrations add column transactional boolean not null default true`;

// Migrations recorded as applied outside a transaction; through jsonb, so a ledger without the column reads none.
const selectNoTransactionSql = `
select name from schema_migrations m where to_jsonb(m) ->> 'transactional' = 'false' order by version`;

/** Adds the column once; checked first, since the ALTER would lock the ledger that readiness reads. */
export async function ensureLedgerRecordsTransactions(client: pg.ClientBase): Promise<void> {
  const { rows } = await client.query<{ found: boolean }>(hasTransactionalColumnSql);
  if (!rows[0]?.found) {
    await client.query(addTransactionalColumnSql);
  }
}

/** Names of the applied migrations that ran outside a transaction, in one statement (/ops/system reads it). */
export async function appliedWithoutTransaction(db: pg.ClientBase | pg.Pool): Promise<string[]> {
  try {
    return (await db.query<{ name: string }>(selectNoTransactionSql)).rows.map((row) => row.name);
  } catch (error) {
    // A database never migrated has no ledger: nothing applied at all.
    if (pgCode(error) === PG.undefinedTable) {
      return [];
    }
    throw error;
  }
}
