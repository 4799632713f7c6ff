import test from 'ava';
import { createHash } from 'node:crypto';
import pino from 'pino';
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

test.serial('cleanup removes only buckets that are full again, in batches', async (t) => {
  await db.pool.query(
    `insert into ratelimit_buckets (key, tat)
     select key, now() + interval '1 second' * offset_seconds
     from unnest($1::bytea[], $2::int[]) as bucket (key, offset_seconds)`,
    [
      ['full-1', 'full-2', 'full-3', 'full-4', 'full-5', 'busy-1', 'busy-2', 'busy-3'].map(hash),
      [-3600, -60, -1, -7200, -5, 60, 3600, 5],
    ],
  );
  t.is(await cleanupRateLimitBuckets(db.pool, { batchSize: 2 }), 5);
  const left = await db.pool.query<{ key: Buffer }>('select key from ratelimit_buckets');
  t.deepEqual(left.rows.map((row) => row.key.toString('hex')).sort(), ['busy-1', 'busy-2', 'busy-3'].map((name) => hash(name).toString('hex')).sort());
  t.is(await cleanupRateLimitBuckets(db.pool, { batchSize: 2 }), 0);
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
