import type pg from 'pg';
import { PG, pgCode } from './pgErrors.ts';
import type { Queryable } from './pool.ts';
import { withTransaction } from './transaction.ts';

// Local to the transaction: the connection goes back to the pool (or a PgBouncer) unbounded.
const setStatementTimeoutSql = `select set_config('statement_timeout', $1, true)`;

/**
 * Runs reads in one transaction whose statements are each bounded by `ms`. A statement past the
 * bound is cancelled and `timedOut` makes the module's answer (its 503 `<module>_query_timeout`).
 */
export async function boundedRead<T>(pool: pg.Pool, ms: number, timedOut: (cause: unknown) => Error, work: (tx: Queryable) => Promise<T>): Promise<T> {
  try {
    return await withTransaction(pool, async (tx) => {
      await tx.query(setStatementTimeoutSql, [`${ms}ms`]);
      return work(tx);
    });
  } catch (error) {
    throw pgCode(error) === PG.queryCanceled ? timedOut(error) : error;
  }
}
