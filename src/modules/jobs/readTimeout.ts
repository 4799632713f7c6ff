import type pg from 'pg';
import { PG, pgCode } from '../../platform/db/pgErrors.ts';
import type { Queryable } from '../../platform/db/pool.ts';
import { withTransaction } from '../../platform/db/transaction.ts';
import { JobsError } from './errors.ts';
import { setStatementTimeout } from './store/reads.ts';

/** Runs reads in one transaction whose statements are each bounded; past the bound, 503 jobs_query_timeout. */
export async function withReadTimeout<T>(pool: pg.Pool, ms: number, work: (tx: Queryable) => Promise<T>): Promise<T> {
  try {
    return await withTransaction(pool, async (tx) => {
      await setStatementTimeout(tx, ms);
      return work(tx);
    });
  } catch (error) {
    if (pgCode(error) === PG.queryCanceled) {
      throw new JobsError('jobs_query_timeout', `The jobs query did not finish within ${ms} ms; try again later.`, { cause: error });
    }
    throw error;
  }
}
