import test from 'ava';
import type pg from 'pg';
import pino from 'pino';
import client from 'prom-client';
import { openRateLimitPool } from '../../../src/modules/ratelimit/index.ts';
import { createRateLimiter, type RateLimit, type RateLimiter, retryAfterSeconds } from '../../../src/modules/ratelimit/index.ts';
import type { StatementRunner } from '../../../src/modules/ratelimit/store.ts';
import { createPool, type InstrumentedPool } from '../../../src/platform/db/pool.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';

let db: TestDatabase;
const pools: InstrumentedPool[] = [];

test.before(async () => {
  db = await createTestDatabase();
});

test.after.always(async () => {
  await Promise.all(pools.map((pool) => pool.end().catch(() => undefined)));
  await db?.drop();
});

const silent = pino({ level: 'silent' });

function newPool(max = 4): InstrumentedPool {
  const pool = createPool({ connectionString: db.url, max, applicationName: 'ratelimit-test' });
  pools.push(pool);
  return pool;
}

// A generous bound: these tests are about what the database decides, on a machine that may be busy.
function limiterWith<N extends string>(
  limits: Record<N, () => RateLimit>,
  options: { db?: StatementRunner; registry?: client.Registry; logger?: pino.Logger; liveInstances?: () => number | undefined } = {},
) {
  return createRateLimiter<N>({
    db: options.db ?? newPool(),
    limits,
    logger: options.logger ?? silent,
    registry: options.registry,
    decisionTimeoutMs: 10_000,
    liveInstances: options.liveInstances,
  });
}

const perHour = (limit: number) => () => ({ limit, periodSeconds: 3600 });
let unique = 0;
const freshKey = () => `key-${process.pid}-${Date.now()}-${(unique += 1)}`;

test('a new key admits its burst at once, then refuses until one interval is paid back', async (t) => {
  const limiter = limiterWith({ login: () => ({ limit: 2, periodSeconds: 60 }) });
  const key = freshKey();
  const first = await limiter.take('login', key);
  const second = await limiter.take('login', key);
  const third = await limiter.take('login', key);
  t.deepEqual([first.allowed, second.allowed, third.allowed], [true, true, false]);
  t.deepEqual([first.remaining, second.remaining], [1, 0]);
  t.is(first.source, 'database');
  // One interval (30 s) less the moments the three decisions took.
  t.true(retryAfterSeconds(third) <= 30 && retryAfterSeconds(third) >= 25);
});

test('concurrent hits for one key are decided in order inside one row update: exactly the burst passes', async (t) => {
  const limiter = limiterWith({ signin: perHour(5) });
  const key = freshKey();
  const decisions = await Promise.all(Array.from({ length: 20 }, () => limiter.take('signin', key)));
  const allowed = decisions.filter((decision) => decision.allowed);
  t.is(allowed.length, 5);
  t.deepEqual(allowed.map((decision) => decision.remaining).sort(), [0, 1, 2, 3, 4]);
  t.true(decisions.filter((decision) => !decision.allowed).every((decision) => decision.retryAfterMs > 0 && decision.remaining === 0));
});

test('decisions match a reference GCRA over random batches, limits and keys', async (t) => {
  // Intervals of minutes or more: the test runs in far less than one, so no quota comes back meanwhile.
  let seed = 7;
  const random = (n: number) => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return seed % n;
  };
  for (let round = 0; round < 12; round += 1) {
    const burst = 1 + random(20);
    const limit = { limit: burst, periodSeconds: burst * (180 + random(3600)) };
    const limiter = limiterWith({ model: () => limit });
    const keys = [freshKey(), freshKey(), freshKey()];
    const used = new Map(keys.map((key) => [key, 0]));
    for (let step = 0; step < 6; step += 1) {
      const hits = keys.flatMap((key) => Array<string>(random(burst + 3)).fill(key));
      const decisions = await Promise.all(hits.map((key) => limiter.take('model', key)));
      for (const key of keys) {
        const asked = hits.filter((hit) => hit === key).length;
        const expected = Math.min(asked, burst - used.get(key)!);
        t.true(decisions.every((decision) => decision.source !== 'fallback'));
        const got = decisions.filter((decision, index) => hits[index] === key && decision.allowed);
        t.is(got.length, expected, `round ${round} step ${step} burst ${burst}`);
        t.deepEqual(
          got.map((decision) => decision.remaining).sort((a, b) => a - b),
          Array.from({ length: expected }, (_v, index) => burst - used.get(key)! - expected + index),
        );
        used.set(key, used.get(key)! + expected);
      }
    }
  }
});

test('three instances on one database admit exactly the budget for one key', async (t) => {
  const instances = [0, 1, 2].map(() => limiterWith({ auth_ip: perHour(60) }));
  for (const [budget, attempts] of [
    [60, 150],
    [60, 61],
  ] as const) {
    const key = freshKey();
    const decisions = await Promise.all(Array.from({ length: attempts }, (_v, index) => instances[index % 3]!.take('auth_ip', key)));
    const admitted = decisions.filter((decision) => decision.allowed).length;
    // Never more; decided in the database, exactly. A statement that waited for another's lock on
    // the new row counts from that writer's instant, not its own earlier start (store.test.ts).
    t.true(admitted <= budget);
    if (decisions.every((decision) => decision.source !== 'fallback')) {
      t.is(admitted, budget);
    }
    t.true(decisions.filter((decision) => !decision.allowed).every((decision) => retryAfterSeconds(decision) >= 1));
  }
});

test('limiters keep separate budgets; no key is stored in the clear', async (t) => {
  const limiter = limiterWith({ first: perHour(1), second: perHour(1) });
  const key = `secret-${freshKey()}@example.com`;
  t.true((await limiter.take('first', key)).allowed);
  t.false((await limiter.take('first', key)).allowed);
  t.true((await limiter.take('second', key)).allowed);
  const rows = await db.pool.query<{ key: Buffer }>('select key from ratelimit_buckets');
  t.true(rows.rows.every((row) => row.key.length === 32 && !row.key.toString('latin1').includes('secret')));
});

test('a lowered limit applies to the next decision, and so does a raised one', async (t) => {
  let limit = { limit: 60, periodSeconds: 3600 };
  const limiter = limiterWith({ auth_ip: () => limit });
  const key = freshKey();
  t.true((await limiter.take('auth_ip', key)).allowed);
  // One request at 60 an hour leaves a minute of debt: under 1 an hour nothing more fits.
  limit = { limit: 1, periodSeconds: 3600 };
  const lowered = await limiter.take('auth_ip', key);
  t.false(lowered.allowed);
  t.is(lowered.limit.limit, 1);
  t.false((await limiter.take('auth_ip', key)).allowed);
  limit = { limit: 60, periodSeconds: 3600 };
  t.true((await limiter.take('auth_ip', key)).allowed);
});

test('refusals for a key known to be blocked are answered from memory, without a statement', async (t) => {
  const pool = newPool();
  let statements = 0;
  const counting: StatementRunner = {
    query: (config) => {
      statements += 1;
      return pool.query(config);
    },
  };
  const limiter = limiterWith({ flood: perHour(1) }, { db: counting });
  const key = freshKey();
  t.true((await limiter.take('flood', key)).allowed);
  t.is(statements, 1);
  const flood = await Promise.all(Array.from({ length: 200 }, () => limiter.take('flood', key)));
  t.is(statements, 1);
  t.true(flood.every((decision) => !decision.allowed && decision.source === 'memory' && retryAfterSeconds(decision) > 3500));
});

test('a busy limiter holds its next statement for the batch window, so takes of separate turns share it; an idle take leaves at once', async (t) => {
  const pool = newPool(1);
  const sent: Array<{ at: number; keys: number; doneAt?: number }> = [];
  const recording: StatementRunner = {
    query: async (config) => {
      const statement: { at: number; keys: number; doneAt?: number } = { at: performance.now(), keys: (config.values?.[0] as Buffer[]).length };
      sent.push(statement);
      const result = await pool.query(config);
      statement.doneAt = performance.now();
      return result;
    },
  };
  const limiter = createRateLimiter({
    db: recording,
    limits: { windowed: perHour(100) },
    logger: silent,
    decisionTimeoutMs: 10_000,
    maxInFlight: 1,
    batchWindowMs: 1_000,
  });
  await limiter.warm();
  sent.length = 0;
  // An idle take's statement leaves in the same turn of the event loop, not after the window.
  const idle = limiter.take('windowed', freshKey());
  await new Promise((resolve) => setImmediate(resolve));
  t.is(sent.length, 1, 'an idle take does not wait for the window');
  await idle;
  // A statement of two keys: the limiter is busy, so what comes next waits for the window.
  await Promise.all([limiter.take('windowed', freshKey()), limiter.take('windowed', freshKey())]);
  const busyDoneAt = sent[1]!.doneAt!;
  const takes = [];
  for (let turn = 0; turn < 5; turn += 1) {
    takes.push(limiter.take('windowed', freshKey()));
    await new Promise((resolve) => setImmediate(resolve));
  }
  const decisions = await Promise.all(takes);
  t.true(decisions.every((decision) => decision.allowed && decision.source === 'database'));
  t.deepEqual(
    sent.map((statement) => statement.keys),
    [1, 2, 5],
  );
  // A window of a second (50 ms in production): five turns of a loaded machine's event loop fit in it.
  t.true(sent[2]!.at - busyDoneAt >= 950, 'the third statement waited for the window');
});

function capture() {
  const lines: string[] = [];
  return { lines, logger: pino({ level: 'warn' }, { write: (line: string) => void lines.push(line) }) };
}

async function counterValue(registry: client.Registry, name: string, labels: Record<string, string>): Promise<number> {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
  const values = (metric?.values ?? []) as Array<{ labels: Record<string, string>; value: number }>;
  return values.filter((v) => Object.entries(labels).every(([k, value]) => v.labels[k] === value)).reduce((sum, v) => sum + v.value, 0);
}

async function gaugeValue(registry: client.Registry, name: string): Promise<number | undefined> {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
  return (metric?.values as Array<{ value: number }> | undefined)?.[0]?.value;
}

/** A runner in front of a pool that a test can make fail, or hold one statement for a while. */
function switchable(pool: InstrumentedPool) {
  const control = { failing: false, holdNextMs: 0, statements: 0 };
  const runner: StatementRunner = {
    query: async (config) => {
      control.statements += 1;
      if (control.failing) {
        throw new Error('the database is down');
      }
      if (control.holdNextMs > 0) {
        const wait = control.holdNextMs;
        control.holdNextMs = 0;
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
      return pool.query(config);
    },
  };
  return { control, runner };
}

async function until(probe: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!probe()) {
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function takeEach<N extends string>(limiter: RateLimiter<N>, name: N, key: string, count: number) {
  const decisions = [];
  for (let attempt = 0; attempt < count; attempt += 1) {
    decisions.push(await limiter.take(name, key));
  }
  return decisions;
}

test('a failing database: alone, an instance of three grants a third of a fresh key, warns once, and counts it', async (t) => {
  const pool = newPool();
  await pool.end();
  const registry = new client.Registry();
  const { lines, logger } = capture();
  const limiter = limiterWith({ auth_login: perHour(10) }, { db: pool, registry, logger, liveInstances: () => 3 });
  const decisions = await takeEach(limiter, 'auth_login', freshKey(), 6);
  t.deepEqual(
    decisions.map((decision) => decision.allowed),
    [true, true, true, false, false, false],
  );
  t.deepEqual(
    decisions.map((decision) => decision.remaining),
    [2, 1, 0, 0, 0, 0],
  );
  t.true(decisions.every((decision) => decision.source === 'fallback' && decision.limit.limit === 10));
  t.true(decisions.filter((decision) => !decision.allowed).every((decision) => retryAfterSeconds(decision) >= 1));
  t.is(lines.length, 1);
  t.is(await counterValue(registry, 'backplane_ratelimit_fallbacks_total', { limiter: 'auth_login', reason: 'error' }), 6);
  t.is(await counterValue(registry, 'backplane_ratelimit_decisions_total', { limiter: 'auth_login', source: 'fallback', allowed: 'true' }), 3);
  t.true(limiter.aloneSince() instanceof Date);
  t.true((await gaugeValue(registry, 'backplane_ratelimit_alone_since_seconds'))! > 0);
  t.is(await gaugeValue(registry, 'backplane_ratelimit_live_instances'), 3);
});

test('alone, a key the database reported as partly spent grants its remaining divided by the live instances', async (t) => {
  const { control, runner } = switchable(newPool());
  const limiter = limiterWith({ auth_ip: perHour(10) }, { db: runner, liveInstances: () => 2 });
  const key = freshKey();
  t.true((await takeEach(limiter, 'auth_ip', key, 4)).every((decision) => decision.allowed && decision.source === 'database'));
  control.failing = true;
  // 6 left in the database, 2 instances: 3 here.
  const alone = await takeEach(limiter, 'auth_ip', key, 5);
  t.deepEqual(
    alone.map((decision) => decision.allowed),
    [true, true, true, false, false],
  );
  t.true(alone.every((decision) => decision.source === 'fallback'));
});

test('alone, a share of zero refuses everything, and so does an instance that has not read the count yet', async (t) => {
  const pool = newPool();
  await pool.end();
  for (const live of [11, undefined]) {
    const limiter = limiterWith({ auth_mfa: perHour(10) }, { db: pool, liveInstances: () => live });
    const decisions = await Promise.all(Array.from({ length: 20 }, (_v, index) => limiter.take('auth_mfa', `${freshKey()}-${index % 3}`)));
    t.true(
      decisions.every((decision) => !decision.allowed && decision.source === 'fallback' && retryAfterSeconds(decision) >= 1),
      `live ${live}`,
    );
  }
});

test('the bound covers the wait for a connection: with every connection taken, the decision is made alone at the bound, not at the pool timeout', async (t) => {
  const pool = createPool({ connectionString: db.url, max: 1, applicationName: 'ratelimit-test', acquireTimeoutMs: 600_000 });
  pools.push(pool);
  const registry = new client.Registry();
  const limiter = createRateLimiter({ db: pool, limits: { busy: perHour(4) }, logger: silent, registry, decisionTimeoutMs: 300, liveInstances: () => 2 });
  const held = await pool.connect();
  try {
    const decisions = await Promise.all(Array.from({ length: 3 }, () => limiter.take('busy', 'one key')));
    t.deepEqual(
      decisions.map((decision) => [decision.allowed, decision.source]),
      [
        [true, 'fallback'],
        [true, 'fallback'],
        [false, 'fallback'],
      ],
    );
    t.is(await counterValue(registry, 'backplane_ratelimit_fallbacks_total', { reason: 'timeout' }), 3);
  } finally {
    held.release();
  }
});

test('the decision pool gives up on a connection or a statement no sooner than the decision bound', (t) => {
  const pool = openRateLimitPool(db.url, 'ratelimit-test', 3_000);
  pools.push(pool);
  const options = (pool as unknown as { options: { connectionTimeoutMillis: number; statement_timeout: number } }).options;
  t.is(options.connectionTimeoutMillis, 3_000);
  t.is(options.statement_timeout, 3_000);
});

test('one slow decision inside the bound is decided in the database and does not make the instance decide alone', async (t) => {
  const { control, runner } = switchable(newPool());
  const registry = new client.Registry();
  const limiter = limiterWith({ slow: perHour(10) }, { db: runner, registry, liveInstances: () => 1 });
  await limiter.warm();
  control.holdNextMs = 500;
  const slow = await limiter.take('slow', freshKey());
  t.is(slow.source, 'database');
  t.is(limiter.aloneSince(), undefined);
  t.is((await limiter.take('slow', freshKey())).source, 'database');
  t.is(await counterValue(registry, 'backplane_ratelimit_fallbacks_total', {}), 0);
  t.is(await gaugeValue(registry, 'backplane_ratelimit_alone_since_seconds'), 0);
});

test('past the bound this instance decides alone; once a probe finds the database answering, decisions go back to it', async (t) => {
  const { control, runner } = switchable(newPool());
  const registry = new client.Registry();
  const limiter = createRateLimiter({
    db: runner,
    limits: { slow: perHour(10) },
    logger: silent,
    registry,
    decisionTimeoutMs: 100,
    retryDatabaseAfterMs: 50,
    liveInstances: () => 1,
  });
  await limiter.warm();
  const key = freshKey();
  t.is((await limiter.take('slow', key)).source, 'database');
  const blocker: pg.PoolClient = await db.pool.connect();
  try {
    await blocker.query('begin');
    await blocker.query('select key from ratelimit_buckets for update');
    const slow = await limiter.take('slow', key);
    t.is(slow.source, 'fallback');
    t.true(slow.allowed);
    t.is(await counterValue(registry, 'backplane_ratelimit_fallbacks_total', { reason: 'timeout' }), 1);
    // While alone, takes are answered at once and send nothing; only the probe asks the database.
    control.failing = true;
    const statements = control.statements;
    t.is((await limiter.take('slow', key)).source, 'fallback');
    await until(() => control.statements > statements, 'a probe');
  } finally {
    await blocker.query('rollback');
    blocker.release();
  }
  control.failing = false;
  await until(() => limiter.aloneSince() === undefined, 'decisions back in the database');
  t.is((await limiter.take('slow', key)).source, 'database');
  t.is(await gaugeValue(registry, 'backplane_ratelimit_alone_since_seconds'), 0);
});

test('what an instance granted alone is written to the database when it answers again, so it is not granted twice', async (t) => {
  const { control, runner } = switchable(newPool());
  const limiter = createRateLimiter({
    db: runner,
    limits: { owed: perHour(10) },
    logger: silent,
    decisionTimeoutMs: 10_000,
    retryDatabaseAfterMs: 50,
    liveInstances: () => 2,
  });
  const key = freshKey();
  control.failing = true;
  t.deepEqual(
    (await takeEach(limiter, 'owed', key, 6)).map((decision) => decision.allowed),
    [true, true, true, true, true, false],
  );
  control.failing = false;
  await until(() => limiter.aloneSince() === undefined, 'decisions back in the database');
  // 5 of 10 were spent alone: the database grants the other 5, whether the write-back went first or with these takes.
  const after = await takeEach(limiter, 'owed', key, 7);
  t.deepEqual(
    after.map((decision) => decision.allowed),
    [true, true, true, true, true, false, false],
  );
  t.true(after.every((decision) => decision.source !== 'fallback'));
});

test('the decision plan the limiter caches while the table is empty still finds buckets by key, never by scanning them', async (t) => {
  // The limiter's pool forces a generic plan, made once per connection, often before any bucket exists.
  const client = await db.pool.connect();
  try {
    await client.query('begin');
    await client.query('delete from ratelimit_buckets');
    await client.query('set local plan_cache_mode = force_generic_plan');
    // The decision is the function's one query, planned as the function plans it (generic, $1-$5).
    const source = await client.query<{ prosrc: string }>(`select prosrc from pg_proc where proname = 'ratelimit_take'`);
    const statement = /return query([\s\S]*);\s*end\s*$/.exec(source.rows[0]!.prosrc)![1]!;
    await client.query(`prepare decide_plan (bytea[], int[], int, bigint, bigint) as ${statement}`);
    const plan = await client.query<{ 'QUERY PLAN': string }>(`explain execute decide_plan (array[sha256('a'::bytea)], array[1], 60, 1000000, 60000000)`);
    const text = plan.rows.map((row) => row['QUERY PLAN']).join('\n');
    t.notRegex(text, /Seq Scan on ratelimit_buckets/);
    t.regex(text, /Index Scan using ratelimit_buckets_pkey/);
  } finally {
    await client.query('rollback');
    await client.query('deallocate all');
    client.release();
  }
});
