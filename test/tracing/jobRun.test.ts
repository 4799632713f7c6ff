import test from 'ava';
import { SpanStatusCode, trace } from '@opentelemetry/api';
import pino from 'pino';
import client from 'prom-client';
import { createJobRegistry, type JobDefinition } from '../../src/modules/jobs/definitions.ts';
import { executeRun } from '../../src/modules/jobs/execute.ts';
import { createJobMetrics } from '../../src/modules/jobs/metrics.ts';
import type { ClaimedRun } from '../../src/modules/jobs/store/runs.ts';
import type { Queryable } from '../../src/platform/db/pool.ts';
import { createLogger } from '../../src/platform/logging/logger.ts';
import { traceLogOptions } from '../../src/platform/tracing/logFields.ts';
import { tracer } from '../../src/platform/tracing/tracer.ts';
import { recordSpans } from './memorySpans.ts';

const recorded = recordSpans();

/** A database that records which span was active for each statement and answers as if the attempt were still this instance's. */
function statementsDb(failedState: 'queued' | 'failed' = 'failed') {
  const seen: Array<{ text: string; spanId: string | undefined }> = [];
  const db = {
    query: async (text: string) => {
      seen.push({ text, spanId: trace.getActiveSpan()?.spanContext().spanId });
      return { rowCount: 1, rows: [{ id: '7', state: failedState, run_after: new Date(), error: 'x' }] };
    },
  } as unknown as Queryable;
  return { db, seen };
}

const jobs = createJobRegistry([
  {
    name: 'traced_ok',
    description: 'test',
    schedule: '0 0 1 1 *',
    timeoutSeconds: 30,
    maxAttempts: 3,
    handler: async (context) => void (await context.db.query('select 1')),
  },
  {
    name: 'traced_fails',
    description: 'test',
    schedule: '0 0 1 1 *',
    timeoutSeconds: 30,
    maxAttempts: 3,
    handler: async () => Promise.reject(new Error('cannot reach postgres://app:hunter2@db.internal/app')),
  },
  {
    name: 'traced_slow',
    description: 'test',
    schedule: '0 0 1 1 *',
    timeoutSeconds: 1,
    maxAttempts: 1,
    handler: (context) => new Promise((_resolve, reject) => context.signal.addEventListener('abort', () => reject(context.signal.reason as Error))),
  },
] satisfies JobDefinition[]);

const run = (job: string, db: Queryable, claimed: Partial<ClaimedRun> = {}) =>
  executeRun(
    {
      db,
      runTask: () => Promise.reject(new Error('no tasks')),
      logger: createLogger('silent'),
      metrics: createJobMetrics(new client.Registry()),
      instanceId: 'i-1',
      leaseSeconds: 30,
    },
    jobs.get(job)!,
    { id: '7', job, trigger: 'schedule', slot: new Date('2026-11-26T12:00:00Z'), attempts: 2, max_attempts: 3, ...claimed },
  ).done;

test.serial('a job run is a root span named for the job, with its slot, attempt and outcome, and its statements run under it', async (t) => {
  recorded.reset();
  const { db, seen } = statementsDb();
  // Started inside a request's span, the run still makes a trace of its own.
  await tracer.startActiveSpan('GET /ops/jobs', async (request) => {
    await run('traced_ok', db);
    request.end();
  });
  const [span] = recorded.named('job traced_ok');
  t.truthy(span);
  t.is(span!.parentSpanContext, undefined);
  t.not(span!.spanContext().traceId, recorded.named('GET /ops/jobs')[0]!.spanContext().traceId);
  t.like(span!.attributes, {
    'job.name': 'traced_ok',
    'job.slot': '2026-11-26T12:00:00.000Z',
    'job.attempt': 2,
    'job.trigger': 'schedule',
    'job.outcome': 'succeeded',
  });
  t.is(span!.status.code, SpanStatusCode.UNSET);
  // The handler's statement and the outcome's.
  t.true(seen.length >= 2);
  t.true(seen.every((statement) => statement.spanId === span!.spanContext().spanId));
});

test.serial('a failed attempt records its error summary, never the credentials in the message, and whether the run retries', async (t) => {
  recorded.reset();
  await run('traced_fails', statementsDb('queued').db);
  const [span] = recorded.named('job traced_fails');
  t.like(span!.attributes, { 'job.outcome': 'retrying', 'job.will_retry': true });
  t.is(span!.status.code, SpanStatusCode.ERROR);
  t.is(span!.events.filter((event) => event.name === 'exception').length, 1);
  t.false(JSON.stringify([span!.events, span!.status]).includes('hunter2'));
});

test.serial('an attempt stopped at its timeout ends as timed_out', async (t) => {
  recorded.reset();
  await run('traced_slow', statementsDb('failed').db, { attempts: 1, max_attempts: 1, slot: null });
  const [span] = recorded.named('job traced_slow');
  t.like(span!.attributes, { 'job.outcome': 'timed_out', 'job.will_retry': false, 'job.attempt': 1 });
  t.false('job.slot' in span!.attributes);
  t.is(span!.status.code, SpanStatusCode.ERROR);
});

test.serial('the log lines of a job run carry its trace and span ids, and lines outside it none', async (t) => {
  recorded.reset();
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ ...traceLogOptions }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
  logger.info({ where: 'before' }, 'outside any span');
  await executeRun(
    {
      db: statementsDb().db,
      runTask: () => Promise.reject(new Error('no tasks')),
      logger,
      metrics: createJobMetrics(new client.Registry()),
      instanceId: 'i-1',
      leaseSeconds: 30,
    },
    jobs.get('traced_ok')!,
    { id: '8', job: 'traced_ok', trigger: 'manual', slot: null, attempts: 1, max_attempts: 3 },
  ).done;
  const span = recorded.named('job traced_ok')[0]!.spanContext();
  const line = lines.find((each) => each.msg === 'job run succeeded');
  t.like(line, { trace_id: span.traceId, span_id: span.spanId, job: 'traced_ok' });
  // Outside a span a line is written as built, before and after traced ones (nothing shared leaks into it).
  logger.info({ where: 'after' }, 'outside any span');
  const outside = lines.filter((each) => each.msg === 'outside any span');
  t.deepEqual(
    outside.map((each) => [each.where, 'trace_id' in each, 'span_id' in each]),
    [
      ['before', false, false],
      ['after', false, false],
    ],
  );
});
