import type pg from 'pg';
import { boundedRead } from '../../platform/db/boundedRead.ts';
import type { Queryable } from '../../platform/db/pool.ts';
import { JobsError } from './errors.ts';

/** Runs reads in one transaction whose statements are each bounded; past the bound, 503 jobs_query_timeout. */
export function withReadTimeout<T>(pool: pg.Pool, ms: number, work: (tx: Queryable) => Promise<T>): Promise<T> {
  const timedOut = (cause: unknown) => new JobsError('jobs_query_timeout', `The jobs query did not finish within ${ms} ms; try again later.`, { cause });
  return boundedRead(pool, ms, timedOut, work);
}
