import test from 'ava';
import { createHash } from 'node:crypto';
import { takeFromBuckets } from '../../../src/modules/ratelimit/store.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';

let db: TestDatabase;

test.before(async () => {
  db = await createTestDatabase();
});

test.after.always(async () => {
  await db?.drop();
});

// An hour per hit: nothing is paid back while a test runs, however loaded the machine.
const rule = { intervalUs: 3_600_000_000, burst: 5 };
const key = (name: string) => createHash('sha256').update(`store-${name}`).digest();
const row = async (bucket: Buffer) =>
  (
    await db.pool.query<{ ctid: string; tat: string; previous_tat: string | null }>(
      'select ctid::text, tat::text, previous_tat::text from ratelimit_buckets where key = $1',
      [bucket],
    )
  ).rows[0];

test('the update keeps the TAT it replaced, so admissions count right; a refusal writes nothing', async (t) => {
  const bucket = key('replaced');
  const [first] = await takeFromBuckets(db.pool, rule, [bucket], [3]);
  t.is(first!.admitted, 3);
  t.is(Math.round(first!.usedUs / rule.intervalUs), 3);
  const inserted = await row(bucket);
  t.is(inserted!.previous_tat, null);

  const [second] = await takeFromBuckets(db.pool, rule, [bucket], [4]);
  t.is(second!.admitted, 2);
  const updated = await row(bucket);
  t.is(updated!.previous_tat, inserted!.tat);

  const [refused] = await takeFromBuckets(db.pool, rule, [bucket], [1]);
  t.is(refused!.admitted, 0);
  t.deepEqual(await row(bucket), updated, 'same row version: the refusal wrote nothing');
});

test('a stale previous_tat (left by a statement that did not write it) never changes the count', async (t) => {
  const bucket = key('stale');
  await db.pool.query(
    `insert into ratelimit_buckets (key, tat, previous_tat) values ($1, statement_timestamp() + interval '2 hours', timestamptz '2000-01-01')`,
    [bucket],
  );
  const [outcome] = await takeFromBuckets(db.pool, rule, [bucket], [5]);
  t.is(outcome!.admitted, 3);
  t.is(Math.round(outcome!.usedUs / rule.intervalUs), 5);
});

test('one statement decides many keys in their order, new and known alike', async (t) => {
  const [a, b, c] = [key('batch-a'), key('batch-b'), key('batch-c')].sort(Buffer.compare) as [Buffer, Buffer, Buffer];
  await takeFromBuckets(db.pool, rule, [b], [5]);
  const outcomes = await takeFromBuckets(db.pool, rule, [a, b, c], [2, 1, 9]);
  t.deepEqual(
    outcomes.map((outcome) => outcome.admitted),
    [2, 0, 5],
  );
});

test('a statement that waited for a row lock counts from the instant of the statement it waited for, not from its own earlier start', async (t) => {
  // The waiter's batch is [blocker, bucket]: it waits on blocker while a later statement takes 2 of
  // bucket's 5. Counted from its own start, bucket would look fuller by the wait: 2 of 3 admitted.
  const [blocker, bucket] = [key('waited-first'), key('waited-second')].sort(Buffer.compare) as [Buffer, Buffer];
  await takeFromBuckets(db.pool, rule, [blocker], [1]);
  const holder = await db.pool.connect();
  const waiter = await db.pool.connect();
  try {
    const pid = (await waiter.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
    await holder.query('begin');
    await holder.query('select 1 from ratelimit_buckets where key = $1 for update', [blocker]);
    const waiting = takeFromBuckets(waiter, rule, [blocker, bucket], [1, 3]);
    for (let tries = 0; ; tries += 1) {
      const { rows } = await db.pool.query<{ wait: string | null }>('select wait_event_type as wait from pg_stat_activity where pid = $1', [pid]);
      if (rows[0]?.wait === 'Lock') {
        break;
      }
      if (tries > 500) {
        throw new Error('the waiter never waited for the lock');
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const [later] = await takeFromBuckets(db.pool, rule, [bucket], [2]);
    t.is(later!.admitted, 2);
    await holder.query('commit');
    const [first, second] = await waiting;
    t.is(first!.admitted, 1);
    t.is(second!.admitted, 3, 'the rest of the burst, as if the two statements had run one after the other');
    t.is(Math.round(second!.usedUs / rule.intervalUs), 5);
  } finally {
    await holder.query('rollback').catch(() => undefined);
    holder.release();
    waiter.release();
  }
});
