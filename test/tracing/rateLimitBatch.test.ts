import { EventEmitter } from 'node:events';
import test from 'ava';
import { type Span, ROOT_CONTEXT, TraceFlags, context, trace } from '@opentelemetry/api';
import pino from 'pino';
import { createRateLimiter } from '../../src/modules/ratelimit/index.ts';
import { bucketDigest } from '../../src/modules/ratelimit/digest.ts';
import { POD_BATCHING, type PodChannel, podBuckets } from '../../src/modules/ratelimit/podClient.ts';
import { type PodDecisions, type PodTakeMessage, createPodDecisions } from '../../src/modules/ratelimit/podDecisions.ts';
import { createPool, type InstrumentedPool } from '../../src/platform/db/pool.ts';
import { tracer } from '../../src/platform/tracing/tracer.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { recordSpans } from './memorySpans.ts';

// The pod's primary and its instances in one process, on a real database: the IPC channel is a
// pair of emitters carrying the same JSON messages, which the tests read.

const recorded = recordSpans();
let db: TestDatabase;
let pool: InstrumentedPool;
let decisions: PodDecisions;
const sent: PodTakeMessage[] = [];
let unique = 0;
const freshKey = () => `someone-${(unique += 1)}@example.com|192.0.2.${unique % 250}`;

test.before(async () => {
  db = await createTestDatabase();
  pool = createPool({ connectionString: db.url, max: 2, applicationName: 'tracing-test', acquireTimeoutMs: 5_000 });
  decisions = createPodDecisions({ db: pool, maxInFlight: 2, statementSpacingMs: 0, instances: 2, sent: () => undefined });
});

test.after.always(async () => {
  await pool?.end();
  await db?.drop();
});

function channelTo(sender: number): PodChannel {
  const incoming = new EventEmitter();
  return {
    send(message, callback) {
      const copy = JSON.parse(JSON.stringify(message)) as PodTakeMessage;
      sent.push(copy);
      setImmediate(() => {
        callback(null);
        // The primary answers outside any request's context, as its IPC handler does.
        context.with(ROOT_CONTEXT, () =>
          decisions.take(copy, (answer) => setImmediate(() => incoming.emit('message', JSON.parse(JSON.stringify(answer)))), sender),
        );
      });
    },
    on: (event, listener) => incoming.on(event, listener),
  };
}

const instance = (sender: number) =>
  createRateLimiter<'login'>({
    take: podBuckets(channelTo(sender), 20_000),
    ...POD_BATCHING,
    limits: { login: () => ({ limit: 100, periodSeconds: 60 }) },
    logger: pino({ level: 'silent' }),
    decisionTimeoutMs: 10_000,
  });
const instances = [instance(1), instance(2)];

/** A request's server span, active while `work` runs, as the HTTP instrumentation makes it. */
const inRequest = <T>(work: (span: Span) => Promise<T>) =>
  tracer.startActiveSpan('POST /auth/sign-in', async (span) => {
    try {
      return await work(span);
    } finally {
      span.end();
    }
  });

test.serial("each waiting request has a ratelimit decide child span, and the primary's batch spans link to them", async (t) => {
  recorded.reset();
  sent.length = 0;
  const keys = [freshKey(), freshKey()];
  const requests = await Promise.all(
    instances.map((limiter, index) => inRequest(async (span) => ((await limiter.take('login', keys[index]!)).allowed ? span.spanContext() : undefined))),
  );
  t.true(requests.every((request) => request !== undefined));

  const waits = recorded.named('ratelimit decide');
  t.is(waits.length, 2);
  for (const request of requests) {
    const wait = waits.find((span) => span.spanContext().traceId === request!.traceId);
    t.is(wait?.parentSpanContext?.spanId, request!.spanId);
    t.like(wait?.attributes, { 'ratelimit.limiter': 'login', 'ratelimit.allowed': true, 'ratelimit.source': 'database' });
  }
  // Merged into one statement or not, every wait is linked from a batch span, each a root of its own.
  const batches = recorded.named('ratelimit decide batch');
  t.true(batches.length >= 1);
  const linked = batches.flatMap((batch) => batch.links.map((link) => link.context.spanId));
  t.deepEqual(new Set(linked), new Set(waits.map((wait) => wait.spanContext().spanId)));
  for (const batch of batches) {
    t.is(batch.parentSpanContext, undefined);
    t.like(batch.attributes, { 'ratelimit.limiter': 'login' });
    t.true((batch.attributes['ratelimit.keys'] as number) >= 1);
  }
  // Only the ids of the waits travelled; never a key, nor its digest, in a span.
  t.deepEqual(
    sent.flatMap((message) => message.waiting ?? []).sort(),
    waits.map((wait) => `${wait.spanContext().traceId}-${wait.spanContext().spanId}`).sort(),
  );
  const everything = JSON.stringify(recorded.spans().map((span) => [span.attributes, span.events, span.links]));
  for (const key of keys) {
    t.false(everything.includes(key.split('|')[0]!));
    t.false(everything.includes(bucketDigest('login', key).toString('hex')));
  }
});

test.serial('a take outside a traced request, or in one not sampled, adds nothing to the message and makes no wait span', async (t) => {
  recorded.reset();
  sent.length = 0;
  t.true((await instances[0]!.take('login', freshKey())).allowed);
  const unsampled = trace.wrapSpanContext({ traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), traceFlags: TraceFlags.NONE });
  t.true((await context.with(trace.setSpan(ROOT_CONTEXT, unsampled), () => instances[1]!.take('login', freshKey()))).allowed);
  t.true(sent.length >= 2);
  t.true(sent.every((message) => !('waiting' in message)));
  t.is(recorded.named('ratelimit decide').length, 0);
  t.true(recorded.named('ratelimit decide batch').every((batch) => batch.links.length === 0));
});

test.serial('a batch with malformed waiting spans is still decided; only the well-formed ones are linked', async (t) => {
  recorded.reset();
  const waiting = ['not-a-span', `${'c'.repeat(32)}-${'d'.repeat(16)}`, 42] as unknown as string[];
  const message: PodTakeMessage = {
    type: 'backplane:ratelimit:take',
    id: 1,
    limiter: 'login',
    rule: { intervalUs: 600_000, burst: 100 },
    keys: [bucketDigest('login', freshKey()).toString('hex')],
    hits: [1],
    waiting,
  };
  const answer = await new Promise<{ outcomes?: unknown[] }>((resolve) => decisions.take(message, resolve, 9));
  t.is(answer.outcomes?.length, 1);
  const [batch] = recorded.named('ratelimit decide batch');
  t.deepEqual(
    batch!.links.map((link) => link.context.spanId),
    ['d'.repeat(16)],
  );
});

test.serial('an instance deciding on its own pool makes the batch span too, linked to the waits', async (t) => {
  recorded.reset();
  const own = createRateLimiter<'login'>({
    db: pool,
    maxInFlight: 1,
    limits: { login: () => ({ limit: 100, periodSeconds: 60 }) },
    logger: pino({ level: 'silent' }),
    decisionTimeoutMs: 10_000,
  });
  await inRequest(() => own.take('login', freshKey()));
  const [wait] = recorded.named('ratelimit decide');
  const batches = recorded.named('ratelimit decide batch');
  t.is(batches.length, 1);
  t.is(batches[0]!.parentSpanContext, undefined);
  t.deepEqual(
    batches[0]!.links.map((link) => link.context.spanId),
    [wait!.spanContext().spanId],
  );
});
