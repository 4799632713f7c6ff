import type { Queryable } from '../../platform/db/pool.ts';

const tablePagesSql = `select (pg_relation_size('ratelimit_buckets') / current_setting('block_size')::bigint)::bigint as pages`;

// One range of pages in physical order: a TID range scan reads those pages only, so no batch reads
// the table, and tat needs no index (decisions stay HOT updates). A row is gone only once full
// again, checked under its lock; rows locked by a decision are left for the next run.
export const purgeRangeSql = `
with doomed as (
  select ctid from ratelimit_buckets
  where ctid >= $1::tid and ctid < $2::tid and tat < statement_timestamp()
  for update skip locked
)
delete from ratelimit_buckets
where ctid = any(array(select ctid from doomed)) and tat < statement_timestamp()`;

/** `(page,0)`: the first tuple of a page, as the tid literal the range bounds take. */
export const pageTid = (page: number): string => `(${page},0)`;

/**
 * The hourly ratelimit_cleanup job: deletes buckets that are full again, a range of pages at a time
 * (8 MB by default), over the pages the table had when it started; returns how many.
 */
export async function cleanupRateLimitBuckets(db: Queryable, options: { batchPages?: number } = {}): Promise<number> {
  const batchPages = options.batchPages ?? 1_000;
  const pages = Number((await db.query<{ pages: string }>(tablePagesSql)).rows[0]!.pages);
  let total = 0;
  for (let first = 0; first < pages; first += batchPages) {
    const result = await db.query(purgeRangeSql, [pageTid(first), pageTid(first + batchPages)]);
    total += result.rowCount ?? 0;
  }
  return total;
}
