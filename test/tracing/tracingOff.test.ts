import { EventEmitter } from 'node:events';
import test from 'ava';
import { trace } from '@opentelemetry/api';
import pino from 'pino';
import { createRateLimiter } from '../../src/modules/ratelimit/index.ts';
import { POD_BATCHING, type PodChannel, podBuckets } from '../../src/modules/ratelimit/podClient.ts';
import type { PodTakeMessage } from '../../src/modules/ratelimit/podDecisions.ts';
import { threadRequest } from '../../src/platform/tasks/pool.ts';
import { defineTask } from '../../src/platform/tasks/task.ts';
import { tracer } from '../../src/platform/tracing/tracer.ts';
import type * as fixtures from '../platform/tasks/fixtures/tasks.ts';

// No SDK in this process, as in an instance without an OTLP endpoint: the API's no-op spans, and
// nothing extra in what crosses to the pod's primary or to a worker thread.

const double = defineTask<typeof fixtures.double>('test.double', import.meta.url, '../platform/tasks/fixtures/tasks', 'double');

test("with tracing off, a request's rate-limit batch and its tasks carry exactly what they did before", async (t) => {
  const sent: PodTakeMessage[] = [];
  const incoming = new EventEmitter();
  const channel: PodChannel = {
    send(message, callback) {
      sent.push(JSON.parse(JSON.stringify(message)) as PodTakeMessage);
      setImmediate(() => {
        callback(null);
        incoming.emit('message', {
          type: 'backplane:ratelimit:taken',
          id: message.id,
          outcomes: message.keys.map(() => ({ admitted: 1, usedUs: 0, before: 0 })),
        });
      });
    },
    on: (event, listener) => incoming.on(event, listener),
  };
  const limiter = createRateLimiter<'login'>({
    take: podBuckets(channel, 20_000),
    ...POD_BATCHING,
    limits: { login: () => ({ limit: 10, periodSeconds: 60 }) },
    logger: pino({ level: 'silent' }),
  });
  const request = await tracer.startActiveSpan('POST /auth/sign-in', async (span) => {
    t.false(span.isRecording());
    t.is(trace.getActiveSpan(), undefined);
    t.true((await limiter.take('login', 'someone@example.com')).allowed);
    span.end();
    return threadRequest(double, { n: 1 });
  });
  t.is(sent.length, 1);
  t.deepEqual(Object.keys(sent[0]!).sort(), ['hits', 'id', 'keys', 'limiter', 'rule', 'type']);
  t.deepEqual(Object.keys(request).sort(), ['exportName', 'file', 'input']);
});
