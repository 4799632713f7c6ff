import type { Queryable } from '../../platform/db/pool.ts';

/** Every instance forgets the cleared keys it holds in memory (payload: limiter and hex digests). */
export const CLEARED_CHANNEL = 'backplane_ratelimit_cleared';

export interface BucketRow {
  key: Buffer;
  /** How far the bucket's TAT lies ahead of the database clock, in µs; null (no row) or 0 or less: full. */
  used_us: string | null;
  db_now: Date;
}

// The operator's few keys by primary key, one row each; the clock is the database's, as decisions use.
const selectBucketsSql = `
select k.key, (extract(epoch from (b.tat - now())) * 1000000)::bigint::text as used_us, now() as db_now
from unnest($1::bytea[]) as k (key) left join ratelimit_buckets b on b.key = k.key`;

/** Each of these digests' bucket, in their order. */
export async function selectBuckets(db: Queryable, keys: Buffer[]): Promise<BucketRow[]> {
  return (await db.query<BucketRow>(selectBucketsSql, [keys])).rows;
}

// Deleting a row is a full bucket: the next decision inserts it afresh.
const deleteBucketsSql = `delete from ratelimit_buckets where key = any($1::bytea[]) returning key`;

/** Deletes these buckets; returns the digests that had one. */
export async function deleteBuckets(tx: Queryable, keys: Buffer[]): Promise<Buffer[]> {
  return (await tx.query<{ key: Buffer }>(deleteBucketsSql, [keys])).rows.map((row) => row.key);
}

const notifyClearedSql = `select pg_notify('${CLEARED_CHANNEL}', $1)`;

/** At commit, tells every instance to forget these keys. */
export async function notifyCleared(tx: Queryable, limiter: string, keys: Buffer[]): Promise<void> {
  await tx.query(notifyClearedSql, [JSON.stringify({ limiter, keys: keys.map((key) => key.toString('hex')) })]);
}
