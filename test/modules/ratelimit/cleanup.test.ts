import test from 'ava';
import { createHash } from 'node:crypto';
import pino from 'pino';
import { pageTid, purgeRangeSql } from '../../../src/modules/ratelimit/cleanup.ts';
import { cleanupRateLimitBuckets, createRateLimiter } from '../../../src/modules/ratelimit/index.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';

let db: TestDatabase;

test.before(async () => {
  db = await createTestDatabase();
});

test.after.always(async () => {
  await db?.drop();
});

const hash = (text: string) => createHash('sha256').update(text).digest();

test.serial('cleanup removes only buckets that are full again, in ranges of pages', async (t) => {
  await db.pool.query(
    `insert into ratelimit_buckets (key, tat)
     select key, now() + interval '1 second' * offset_seconds
     from unnest($1::bytea[], $2::int[]) as bucket (key, offset_seconds)`,
    [['full-1', 'full-2', 'full-3', 'full-4', 'full-5', 'busy-1', 'busy-2', 'busy-3'].map(hash), [-3600, -60, -1, -7200, -5, 60, 3600, 5]],
  );
  t.is(await cleanupRateLimitBuckets(db.pool, { batchPages: 1 }), 5);
  const left = await db.pool.query<{ key: Buffer }>('select key from ratelimit_buckets');
  t.deepEqual(left.rows.map((row) => row.key.toString('hex')).sort(), ['busy-1', 'busy-2', 'busy-3'].map((name) => hash(name).toString('hex')).sort());
  t.is(await cleanupRateLimitBuckets(db.pool, { batchPages: 1 }), 0);
  await db.pool.query('delete from ratelimit_buckets');
});

test.serial('cleanup walks the table in physical order, range by range, reading no page twice', async (t) => {
  // Expired and live buckets interleaved over many pages.
  await db.pool.query(
    `insert into ratelimit_buckets (key, tat)
     select sha256(n::text::bytea), now() + case when n % 3 = 0 then interval '1 hour' else interval '-1 hour' end
     from generate_series(1, 5000) as n`,
  );
  const pages = Number((await db.pool.query(`select pg_relation_size('ratelimit_buckets') / current_setting('block_size')::int as pages`)).rows[0].pages);
  t.true(pages > 10);
  t.is(await cleanupRateLimitBuckets(db.pool, { batchPages: 7 }), 5000 - Math.floor(5000 / 3));
  t.is(Number((await db.pool.query(`select count(*) from ratelimit_buckets where tat < now()`)).rows[0].count), 0);
  t.is(Number((await db.pool.query('select count(*) from ratelimit_buckets')).rows[0].count), Math.floor(5000 / 3));

  const plan = JSON.stringify((await db.pool.query(`explain (format json) ${purgeRangeSql}`, [pageTid(0), pageTid(7)])).rows[0]);
  t.regex(plan, /Tid Range Scan/);
  t.notRegex(plan, /Seq Scan|Index Scan/);
  await db.pool.query('delete from ratelimit_buckets');
});

test.serial('a bucket the limiter filled is removed once it is full again, not before', async (t) => {
  const limiter = createRateLimiter({
    db: db.pool,
    limits: { quick: () => ({ limit: 100, periodSeconds: 1 }), slow: () => ({ limit: 5, periodSeconds: 3600 }) },
    logger: pino({ level: 'silent' }),
    decisionTimeoutMs: 10_000,
  });
  await limiter.take('quick', 'client');
  await limiter.take('slow', 'client');
  t.is((await db.pool.query('select 1 from ratelimit_buckets')).rowCount, 2);
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.is(await cleanupRateLimitBuckets(db.pool), 1);
  t.is((await db.pool.query('select 1 from ratelimit_buckets')).rowCount, 1);
  t.is((await limiter.take('slow', 'client')).remaining, 3);
});
