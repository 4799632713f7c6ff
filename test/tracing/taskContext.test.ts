import test from 'ava';
import { ROOT_CONTEXT, SpanStatusCode, TraceFlags, context, trace } from '@opentelemetry/api';
import client from 'prom-client';
import { createLogger } from '../../src/platform/logging/logger.ts';
import { createTaskPool, threadRequest } from '../../src/platform/tasks/pool.ts';
import { defineTask } from '../../src/platform/tasks/task.ts';
import runInThread from '../../src/platform/tasks/thread.ts';
import { tracer } from '../../src/platform/tracing/tracer.ts';
import type * as fixtures from '../platform/tasks/fixtures/tasks.ts';
import { recordSpans } from './memorySpans.ts';

// The request a thread is posted, built and run here in one process: the carrier is all that
// crosses to the thread, so extracting it here is what the thread does with its own SDK.

const recorded = recordSpans();
const double = defineTask<typeof fixtures.double>('test.double', import.meta.url, '../platform/tasks/fixtures/tasks', 'double');
const failing = defineTask<typeof fixtures.failWithCode>('test.fail_with_code', import.meta.url, '../platform/tasks/fixtures/tasks', 'failWithCode');

test.serial('a task submitted inside a sampled span carries a W3C traceparent and runs in a task span, the child of the submitter', async (t) => {
  recorded.reset();
  const { request, submitter } = tracer.startActiveSpan('job traced', (span) => {
    const built = threadRequest(double, { n: 2 });
    span.end();
    return { request: structuredClone(built), submitter: span.spanContext() };
  });
  t.is(request.trace?.task, 'test.double');
  t.regex(request.trace!.carrier.traceparent!, new RegExp(`^00-${submitter.traceId}-${submitter.spanId}-01$`));
  // The thread has no context of its own: only the carrier links the task to its submitter.
  const reply = await context.with(ROOT_CONTEXT, () => runInThread(request));
  t.deepEqual(reply, { ok: true, output: { doubled: 4 } });
  const [span] = recorded.named('task test.double');
  t.is(span?.spanContext().traceId, submitter.traceId);
  t.is(span?.parentSpanContext?.spanId, submitter.spanId);
  t.like(span?.attributes, { 'task.name': 'test.double' });
});

test.serial('a task that fails ends its span with the failure code', async (t) => {
  recorded.reset();
  const request = tracer.startActiveSpan('job traced', (span) => {
    span.end();
    return threadRequest(failing, { code: 'fixture_failed' });
  });
  t.like(await runInThread(request), { ok: false, error: { code: 'fixture_failed' } });
  const [span] = recorded.named('task test.fail_with_code');
  t.is(span?.status.code, SpanStatusCode.ERROR);
  t.like(span?.attributes, { 'task.error_code': 'fixture_failed' });
});

test.serial('outside a span, or in one not sampled, the request is as before and the task makes no span', async (t) => {
  recorded.reset();
  t.deepEqual(Object.keys(threadRequest(double, { n: 1 })).sort(), ['exportName', 'file', 'input']);
  const unsampled = trace.wrapSpanContext({ traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), traceFlags: TraceFlags.NONE });
  const request = context.with(trace.setSpan(ROOT_CONTEXT, unsampled), () => threadRequest(double, { n: 1 }));
  t.false('trace' in request);
  t.deepEqual(await runInThread(request), { ok: true, output: { doubled: 2 } });
  t.is(recorded.spans().length, 0);
});

test.serial('a traced task crosses to a real worker thread and back', async (t) => {
  const pool = createTaskPool({ threads: 1, closeTimeoutMs: 5_000, registry: new client.Registry(), logger: createLogger('silent') });
  try {
    t.deepEqual(
      await tracer.startActiveSpan('job traced', async (span) => {
        try {
          return await pool.runTask(double, { n: 5 });
        } finally {
          span.end();
        }
      }),
      { doubled: 10 },
    );
  } finally {
    await pool.close();
  }
});
