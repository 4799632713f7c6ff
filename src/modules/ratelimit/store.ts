import type { SpanContext } from '@opentelemetry/api';
import type pg from 'pg';
import { decideBatchTraced } from './decisionSpans.ts';

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
  /**
   * Hits of the same key counted ahead of these in the statement: other instances' of the pod, when
   * its primary decided them together (podDecisions.ts); 0 when this instance sent the statement.
   */
  before: number;
}

/**
 * Decides a batch of one limiter's keys under `rule`: takeFromBuckets on the instance's own pool,
 * or the pod's primary, which merges every instance's batches into its statements. `waiting`: the
 * sampled `ratelimit decide` spans of the requests waiting on it, which the statement's span links to.
 */
export type TakeBuckets = (limiter: string, rule: BucketRule, keys: Buffer[], hits: number[], waiting?: readonly SpanContext[]) => Promise<BucketOutcome[]>;

// One call decides a whole batch. Per key: hits are capped at the burst and carried into
// the upsert as the TAT a new bucket would get; on conflict the locked row admits as many as fit
// under the tolerance and moves its TAT, or is left alone when none fit (a refusal writes
// nothing). Keys arrive sorted, so concurrent batches lock rows in one order and cannot deadlock.
// The update keeps the TAT it replaces in previous_tat, which RETURNING reads to count what was
// admitted (null for a row just inserted): `RETURNING old.tat` would need PostgreSQL 18.
// Refused keys read their TAT from the statement's snapshot, only to say when to retry: a
// subquery per refused key, never a join, so the plan cached while the table was small cannot
// become a scan of every bucket per statement as the table grows.
// A known row counts from the later of the statement's start and the row's last write
// (written_at): a statement that waited for another's lock on it may have started first, and from
// its own start the row would look fuller by the wait.
// The statement is the body of the function `ratelimit_take` (migrations
// 20261124000100_create_ratelimit_take_function, 20261125100000_count_ratelimit_waits_from_the_last_write):
// PL/pgSQL keeps its plan per server connection even behind a transaction pooler, and it commits
// without waiting for the WAL flush (ADR 0020).
export const takeSql = 'select "position", admitted, used_us from ratelimit_take($1::bytea[], $2::int[], $3::int, $4::bigint, $5::bigint)';

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
  return result.rows.map((row) => ({ admitted: row.admitted, usedUs: Number(row.used_us), before: 0 }));
}

/** Batches decided on this instance's own pool, one statement each; `sent` counts their keys. */
export function poolBuckets(db: StatementRunner, sent: (limiter: string, keys: number) => void): TakeBuckets {
  return (limiter, rule, keys, hits, waiting) => {
    if (keys.length === 0) {
      return takeFromBuckets(db, rule, keys, hits);
    }
    sent(limiter, keys.length);
    const links = waiting?.map((span) => ({ context: span })) ?? [];
    return decideBatchTraced(limiter, keys.length, links, () => takeFromBuckets(db, rule, keys, hits));
  };
}
