import { EventEmitter } from 'node:events';
import test from 'ava';
import pino from 'pino';
import { createRateLimiter, type RateLimit } from '../../../src/modules/ratelimit/index.ts';
import { POD_BATCHING, type PodChannel, podBuckets } from '../../../src/modules/ratelimit/podClient.ts';
import { type PodDecisions, type PodTakeMessage, type PodTakenMessage, createPodDecisions } from '../../../src/modules/ratelimit/podDecisions.ts';
import { gcraRule } from '../../../src/modules/ratelimit/rules.ts';
import { createPool, type InstrumentedPool } from '../../../src/platform/db/pool.ts';
import { freePort } from '../../../src/platform/db/embedded.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';

// The pod's primary deciding for its instances, on a real database: here the IPC channel is an
// in-process pair of emitters carrying the same JSON messages (test/cluster/podRateLimits.test.ts
// runs it through `backplane serve`).

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
let unique = 0;
let senders = 0;
const freshKey = () => `pod-${process.pid}-${Date.now()}-${(unique += 1)}`;

function newPool(url = db.url): InstrumentedPool {
  const pool = createPool({ connectionString: url, max: 2, applicationName: 'pod-decisions-test', acquireTimeoutMs: 2_000 });
  pools.push(pool);
  return pool;
}

/** The primary's decisions and what they sent: one entry per statement, its keys, and when it left. */
function primary(url?: string, statementSpacingMs = 0, instances = 2): { decisions: PodDecisions; statements: number[]; startedAt: number[] } {
  const statements: number[] = [];
  const startedAt: number[] = [];
  const decisions = createPodDecisions({
    db: newPool(url),
    maxInFlight: 2,
    statementSpacingMs,
    instances,
    sent: (_limiter, keys) => {
      statements.push(keys);
      startedAt.push(performance.now());
    },
  });
  return { decisions, statements, startedAt };
}

/** One instance's end of the channel, answered by `decisions` as the cluster primary answers a worker, through JSON. */
function channelTo(decisions: PodDecisions, sender: number): PodChannel {
  const incoming = new EventEmitter();
  return {
    send(message, callback) {
      const copy = JSON.parse(JSON.stringify(message)) as PodTakeMessage;
      setImmediate(() => {
        callback(null);
        decisions.take(copy, (answer) => setImmediate(() => incoming.emit('message', JSON.parse(JSON.stringify(answer)))), sender);
      });
    },
    on: (event, listener) => incoming.on(event, listener),
  };
}

/** An instance of the pod: its limiter sends each turn's takes to the primary, as the module sets it up. */
function instanceOf(decisions: PodDecisions, limit: RateLimit, liveInstances = 2) {
  return createRateLimiter<'login'>({
    take: podBuckets(channelTo(decisions, (senders += 1)), 20_000),
    ...POD_BATCHING,
    limits: { login: () => limit },
    logger: silent,
    decisionTimeoutMs: 10_000,
    liveInstances: () => liveInstances,
  });
}

const ask = (decisions: PodDecisions, message: Omit<PodTakeMessage, 'type' | 'id'>, id = 1, sender = id) =>
  new Promise<PodTakenMessage>((resolve) => decisions.take({ type: 'backplane:ratelimit:take', id, ...message }, resolve, sender));

const hex = (n: number) => n.toString(16).padStart(64, '0');

test('batches of several instances that arrive together share one statement; a key asked by two is one row update, the first asker first', async (t) => {
  const { decisions, statements } = primary();
  const rule = gcraRule({ limit: 3, periodSeconds: 3600 });
  const key = hex(Date.now());
  const other = hex(Date.now() + 1);
  const [a, b] = await Promise.all([
    ask(decisions, { limiter: 'login', rule, keys: [key], hits: [2] }, 1),
    ask(decisions, { limiter: 'login', rule, keys: [other, key], hits: [1, 2] }, 2),
  ]);
  t.deepEqual(statements, [2]);
  t.is(a.id, 1);
  t.is(b.id, 2);
  // Four hits of a burst of three: the first instance's two come first.
  t.like(a.outcomes![0], { admitted: 3, before: 0 });
  t.like(b.outcomes![1], { admitted: 3, before: 2 });
  t.like(b.outcomes![0], { admitted: 1, before: 0 });
  t.is(a.outcomes![0]!.usedUs, b.outcomes![1]!.usedUs);
});

test('statements of one limiter start at least the spacing apart while few keys wait: keys that come meanwhile share the next, 32 waiting keys leave at once, a key after a quiet spell at once', async (t) => {
  const spacingMs = 1_500;
  // Asked as one instance of three: the others could still send.
  const { decisions, statements, startedAt } = primary(undefined, spacingMs, 3);
  const rule = gcraRule({ limit: 5, periodSeconds: 3600 });
  const base = Date.now() * 64;
  const keys = (from: number, count: number) => Array.from({ length: count }, (_v, index) => hex(base + from + index));
  const first = ask(decisions, { limiter: 'login', rule, keys: keys(0, 1), hits: [1] }, 1, 1);
  // Sent in the turn after it arrived: nothing left before it.
  await new Promise((resolve) => setImmediate(resolve));
  t.deepEqual(statements, [1]);
  // A full batch does not wait for the spacing (parallelBatchKeys, 32).
  const full = ask(decisions, { limiter: 'login', rule, keys: keys(1, 32), hits: Array.from({ length: 32 }, () => 1) }, 2, 1);
  await new Promise((resolve) => setImmediate(resolve));
  t.deepEqual(statements, [1, 32]);
  const second = ask(decisions, { limiter: 'login', rule, keys: keys(33, 1), hits: [1] }, 3, 1);
  await new Promise((resolve) => setImmediate(resolve));
  const third = ask(decisions, { limiter: 'login', rule, keys: keys(34, 2), hits: [1, 1] }, 4, 1);
  const answers = await Promise.all([first, full, second, third]);
  t.true(answers.every((answer) => answer.outcomes?.every((outcome) => outcome.admitted === 1)));
  t.deepEqual(statements, [1, 32, 3]);
  // Timers never fire early by more than their rounding.
  t.true(startedAt[2]! - startedAt[1]! >= spacingMs - 2, `${startedAt[2]! - startedAt[1]!} ms apart`);
  await new Promise((resolve) => setTimeout(resolve, spacingMs));
  await ask(decisions, { limiter: 'login', rule, keys: keys(36, 1), hits: [1] }, 5, 1);
  t.deepEqual(statements, [1, 32, 3, 1]);
});

test('once every instance of the pod has a batch waiting, the statement leaves without waiting for the spacing', async (t) => {
  const { decisions, statements } = primary(undefined, 10_000, 2);
  const rule = gcraRule({ limit: 5, periodSeconds: 3600 });
  const base = Date.now() * 64 + 1_000;
  await ask(decisions, { limiter: 'login', rule, keys: [hex(base)], hits: [1] }, 1, 1);
  t.deepEqual(statements, [1]);
  const first = ask(decisions, { limiter: 'login', rule, keys: [hex(base + 1)], hits: [1] }, 2, 1);
  await new Promise((resolve) => setImmediate(resolve));
  t.deepEqual(statements, [1], 'the other instance could still send');
  const second = ask(decisions, { limiter: 'login', rule, keys: [hex(base + 2)], hits: [1] }, 3, 2);
  const started = performance.now();
  await Promise.all([first, second]);
  t.deepEqual(statements, [1, 2]);
  t.true(performance.now() - started < 10_000);
});

test('two instances of a pod admit exactly the budget of a key they both take, in one statement per turn', async (t) => {
  const { decisions, statements } = primary();
  const limit = { limit: 10, periodSeconds: 3600 };
  const instances = [instanceOf(decisions, limit), instanceOf(decisions, limit)];
  const key = freshKey();
  const decided = await Promise.all(Array.from({ length: 30 }, (_v, index) => instances[index % 2]!.take('login', key)));
  t.true(decided.filter((decision) => decision.allowed).length <= 10);
  // A machine busy past the bound makes an instance decide alone; only a database decision is exact.
  if (decided.some((decision) => decision.source === 'fallback')) {
    t.pass('an instance decided alone');
    return;
  }
  t.is(decided.filter((decision) => decision.allowed).length, 10);
  // What each admitted decision says is left counts down 9..0 across both instances.
  t.deepEqual(
    decided
      .filter((decision) => decision.allowed)
      .map((decision) => decision.remaining)
      .sort((x, y) => y - x),
    [9, 8, 7, 6, 5, 4, 3, 2, 1, 0],
  );
  t.true(statements.reduce((sum, keys) => sum + keys, 0) <= 30);
  // Both instances now know the key is over its budget.
  for (const instance of instances) {
    t.false((await instance.take('login', key)).allowed);
  }
});

test('a malformed batch is answered with an error and never joins the statement of the others', async (t) => {
  const { decisions, statements } = primary();
  const rule = gcraRule({ limit: 3, periodSeconds: 3600 });
  const good = ask(decisions, { limiter: 'login', rule, keys: [hex(Date.now() + 7)], hits: [1] }, 1);
  const malformed: Array<Omit<PodTakeMessage, 'type' | 'id'>> = [
    { limiter: 'login', rule, keys: ['not hex'], hits: [1] },
    { limiter: 'login', rule, keys: [hex(1)], hits: [] },
    { limiter: 'login', rule, keys: [hex(1)], hits: [-1] },
    { limiter: 'login', rule, keys: [hex(1), hex(1)], hits: [1, 1] },
    { limiter: 'login', rule: { intervalUs: Number.NaN, burst: 3 }, keys: [hex(1)], hits: [1] },
    { limiter: 'login', rule: undefined as unknown as PodTakeMessage['rule'], keys: [hex(1)], hits: [1] },
    { limiter: 'login', rule, keys: [`${hex(1)}\u0000`], hits: [1] },
    { limiter: 'login', rule, keys: [hex(1)], hits: [2 ** 31] },
    { limiter: 'login', rule, keys: [hex(1)], hits: [1.5] },
    { limiter: 'login', rule: { intervalUs: 0, burst: 3 }, keys: [hex(1)], hits: [1] },
    { limiter: 'login', rule: { intervalUs: 1_000, burst: 0 }, keys: [hex(1)], hits: [1] },
    { limiter: 'login', rule: { intervalUs: 1_000, burst: 2 ** 31 }, keys: [hex(1)], hits: [1] },
    { limiter: 'login', rule: { intervalUs: 2 ** 40, burst: 2 ** 20 }, keys: [hex(1)], hits: [1] },
  ];
  const answers = await Promise.all(malformed.map((message, index) => ask(decisions, message, 10 + index)));
  t.true(answers.every((answer) => answer.error === 'malformed rate-limit batch' && answer.outcomes === undefined));
  t.like((await good).outcomes![0], { admitted: 1 });
  t.deepEqual(statements, [1]);
});

test('when the pod cannot reach the database, its instances decide alone with their shares, and every take is answered', async (t) => {
  // Nothing listens on this port: every connection is refused.
  const { decisions } = primary(`postgres://nobody@127.0.0.1:${await freePort()}/none`);
  const instance = instanceOf(decisions, { limit: 10, periodSeconds: 3600 }, 2);
  const key = freshKey();
  const decided = await Promise.all(Array.from({ length: 12 }, () => instance.take('login', key)));
  t.true(decided.every((decision) => decision.source === 'fallback'));
  // Half of the 10 for this instance of two.
  t.is(decided.filter((decision) => decision.allowed).length, 5);
  t.truthy(instance.aloneSince());
});

test('an instance whose primary never answers decides alone at its bound', async (t) => {
  const silentPrimary: PodChannel = { send: (_message, callback) => callback(null), on: () => undefined };
  const instance = createRateLimiter<'login'>({
    take: podBuckets(silentPrimary, 60_000),
    ...POD_BATCHING,
    limits: { login: () => ({ limit: 10, periodSeconds: 3600 }) },
    logger: silent,
    decisionTimeoutMs: 300,
    liveInstances: () => 2,
  });
  const started = performance.now();
  const decision = await instance.take('login', freshKey());
  t.is(decision.source, 'fallback');
  t.true(decision.allowed);
  t.true(performance.now() - started < 5_000);
});

test('a closed channel to the primary is a failed decision, not a thrown one', async (t) => {
  const closed: PodChannel = {
    send: () => {
      throw Object.assign(new Error('Channel closed'), { code: 'ERR_IPC_CHANNEL_CLOSED' });
    },
    on: () => undefined,
  };
  const take = podBuckets(closed, 1_000);
  await t.throwsAsync(take('login', gcraRule({ limit: 1, periodSeconds: 60 }), [Buffer.alloc(32)], [1]), { message: /Channel closed/ });
});
