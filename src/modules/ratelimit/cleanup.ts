import type { Queryable } from '../../platform/db/pool.ts';

// Walks the primary key in batches (tat has no index, so decisions stay HOT updates). A row is
// gone only once full again, checked under its lock; rows locked by a decision are left for the
// next run.
const purgeBatchSql = `
with doomed as (
  select key from ratelimit_buckets
  where key > $1 and tat < statement_timestamp()
  order by key
  limit $2
  for update skip locked
), gone as (
  delete from ratelimit_buckets bucket using doomed where bucket.key = doomed.key returning bucket.key
)
select count(*)::int as deleted, (select key from doomed order by key desc limit 1) as last_key from gone`;

/** The hourly ratelimit_cleanup job: deletes buckets that are full again, in batches; returns how many. */
export async function cleanupRateLimitBuckets(db: Queryable, options: { batchSize?: number } = {}): Promise<number> {
  const batchSize = options.batchSize ?? 10_000;
  let after: Buffer = Buffer.alloc(0);
  let total = 0;
  for (;;) {
    const result = await db.query<{ deleted: number; last_key: Buffer | null }>(purgeBatchSql, [after, batchSize]);
    const { deleted, last_key: lastKey } = result.rows[0]!;
    total += deleted;
    if (!lastKey) {
      return total;
    }
    after = lastKey;
  }
}
