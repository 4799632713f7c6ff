import type { Queryable } from './pool.ts';

// Backplane's own names for the database a module's code is handed, so an application's store
// functions need neither pg nor its types: pg's pool, clients and Queryable all fit them.

/** What a statement answered: its rows, and how many rows it returned or changed. */
export interface QueryRows<R> {
  /** The rows, one object per row keyed by column name. */
  rows: R[];
  /** Rows returned or changed; null for a statement that counts none (`begin`). */
  rowCount: number | null;
}

/** Anything that runs a statement: the instance's database, or the connection of a transaction. */
export interface QueryRunner {
  /** Runs one statement with `$n` parameters; `R` names the row's columns. */
  query<R extends object = Record<string, unknown>>(text: string, values?: unknown[]): Promise<QueryRows<R>>;
}

/** One connection taken from the database, for work that must run on it alone (`withTransaction` takes one). */
export interface DatabaseConnection extends Queryable {
  /** Hands the connection back; `true` closes it instead, its state being unknown. */
  release(destroy?: boolean): void;
}

/** The instance's database as a module holds it (`context.pool` is one): statements on any free connection, transactions through `withTransaction`. */
export interface Database extends QueryRunner {
  /** Takes one connection; release it when done. */
  connect(): Promise<DatabaseConnection>;
}
