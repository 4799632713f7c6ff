import type pg from 'pg';

/** A pool or client that runs named (prepared) statements. */
export interface StatementRunner {
  query<R extends pg.QueryResultRow>(config: pg.QueryConfig): Promise<pg.QueryResult<R>>;
}

/** One limiter's GCRA parameters in whole microseconds: emission interval and tolerance. */
export interface BucketRule {
  intervalUs: number;
  burst: number;
}

export interface BucketOutcome {
  /** How many of the hits asked for were admitted (the first ones, in order). */
  admitted: number;
  /** How far the bucket's TAT lies ahead of the database clock after the decision, in µs. */
  usedUs: number;
}

// One statement decides a whole batch. Per key: hits are capped at the burst and carried into
// the upsert as the TAT a new bucket would get; on conflict the locked row admits as many as fit
// under the tolerance and moves its TAT, or is left alone when none fit (a refusal writes
// nothing). Keys arrive sorted, so concurrent batches lock rows in one order and cannot deadlock.
// The update keeps the TAT it replaces in previous_tat, which RETURNING reads to count what was
// admitted (null for a row just inserted): `RETURNING old.tat` would need PostgreSQL 18.
// Refused keys read their TAT from the statement's snapshot, only to say when to retry: a
// subquery per refused key, never a join, so the plan cached while the table was small cannot
// become a scan of every bucket per statement as the table grows.
export const takeSql = `
with input as (
  select key, least(hits, $3::int) as wanted, position
  from unnest($1::bytea[], $2::int[]) with ordinality as hit (key, hits, position)
), taken as (
  insert into ratelimit_buckets as bucket (key, tat)
  select key, statement_timestamp() + interval '1 microsecond' * (wanted * $4::bigint)
  from input
  order by position
  on conflict (key) do update
    set previous_tat = bucket.tat,
      tat = statement_timestamp() + interval '1 microsecond' * (
      greatest(extract(epoch from bucket.tat - statement_timestamp()) * 1000000, 0)
      + $4::bigint * least(
        round(extract(epoch from excluded.tat - statement_timestamp()) * 1000000 / $4::bigint),
        floor(($5::bigint - greatest(extract(epoch from bucket.tat - statement_timestamp()) * 1000000, 0)) / $4::bigint)))
    where $5::bigint - greatest(extract(epoch from bucket.tat - statement_timestamp()) * 1000000, 0) >= $4::bigint
  returning bucket.key, bucket.previous_tat as before, bucket.tat as after
)
select input.position::int as position,
  coalesce(round((extract(epoch from taken.after - statement_timestamp())
    - greatest(extract(epoch from coalesce(taken.before, statement_timestamp()) - statement_timestamp()), 0)) * 1000000 / $4::bigint), 0)::int as admitted,
  coalesce(extract(epoch from taken.after - statement_timestamp()) * 1000000,
    greatest(extract(epoch from (select stored.tat from ratelimit_buckets stored where stored.key = input.key) - statement_timestamp()) * 1000000, 0),
    $5::bigint)::bigint as used_us
from input
left join taken on taken.key = input.key
order by input.position`;

/**
 * Decides `hits[i]` hits for `keys[i]` (distinct, sorted) under one rule, in one round trip, on
 * the database clock.
 */
export async function takeFromBuckets(db: StatementRunner, rule: BucketRule, keys: Buffer[], hits: number[]): Promise<BucketOutcome[]> {
  const result = await db.query<{ position: number; admitted: number; used_us: string }>({
    name: 'ratelimit_take',
    text: takeSql,
    values: [keys, hits, rule.burst, rule.intervalUs, rule.intervalUs * rule.burst],
  });
  return result.rows.map((row) => ({ admitted: row.admitted, usedUs: Number(row.used_us) }));
}
