import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { type TestCluster, root, startCluster, waitFor } from '../support/cluster.ts';
import { type TestDatabase, createTestDatabase } from '../support/database.ts';
import { type PlainResponse, send } from '../support/forwarded.ts';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '../support/otlpReceiver.ts';

// Issue 45: a cluster of one instance sampling nothing of its own (parentbased_traceidratio at 0)
// behind a trusted proxy on 127.0.0.1; a client on 127.0.0.2 is anyone. Only a trusted proxy's
// sampled traceparent makes spans here, so any other span of a request would be a defect.
const PROXY = '127.0.0.1';
const OUTSIDER = '127.0.0.2';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
let database: TestDatabase;
let receiver: OtlpReceiver;
let cluster: TestCluster;

test.before(async () => {
  database = await createTestDatabase();
  receiver = await startOtlpReceiver();
  cluster = await startCluster(database.url, 1, {
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_BSP_SCHEDULE_DELAY: '200',
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: '0',
    APP_TRUSTED_PROXIES: `${PROXY}/32`,
  });
});

test.after.always(async () => {
  await cluster?.stop();
  await receiver?.close();
  await database?.drop();
});

const hex = (bytes: number) => randomBytes(bytes).toString('hex');
const traceparent = (traceId: string, flags: '00' | '01') => `00-${traceId}-${hex(8)}-${flags}`;

/** The cluster's JSON log lines so far. */
const logLines = () =>
  cluster
    .output()
    .split('\n')
    .filter((each) => each.startsWith('{'))
    .map((each) => JSON.parse(each) as Record<string, unknown>);

const accessLine = (requestId: string) =>
  waitFor(async () => logLines().find((each) => each.msg === 'request' && each.request_id === requestId), 10_000, `the access log line of ${requestId}`);

/** The server span of `traceId`, once exported. */
async function serverSpan(traceId: string): Promise<ReceivedSpan> {
  const spans = await receiver.waitForSpans(
    (received) => received.some((span) => span.traceId === traceId && span.kind === 2),
    `the server span of ${traceId}`,
  );
  return spans.find((span) => span.traceId === traceId && span.kind === 2)!;
}

/**
 * Waits until a trusted proxy's sampled request, sent now, has been exported: the instance exports
 * spans in the order they end, so anything an earlier request made would have arrived by then.
 */
async function exportedSoFar(): Promise<ReceivedSpan[]> {
  const traceId = hex(16);
  await send(cluster.url, { method: 'GET', path: '/trace-barrier', localAddress: PROXY, headers: { traceparent: traceparent(traceId, '01') } });
  await serverSpan(traceId);
  return receiver.spans();
}

test("an outsider's sampled traceparent at ratio 0 is not exported; a trusted proxy's is, with the path, the client address and the version", async (t) => {
  const outsider = hex(16);
  const refused = await send(cluster.url, {
    method: 'GET',
    path: '/ops/system?verbose=1',
    localAddress: OUTSIDER,
    headers: { traceparent: traceparent(outsider, '01') },
  });
  t.is(refused.status, 401);
  // Its trace id is still its request id: 32 hex digits, no more than X-Request-Id already lets anyone choose.
  t.is(refused.headers['x-request-id'], outsider);

  const proxied = hex(16);
  const response = await send(cluster.url, {
    method: 'GET',
    path: '/ops/system?verbose=1&token=not-recorded',
    localAddress: PROXY,
    forwardedFor: '198.51.100.23',
    headers: { traceparent: traceparent(proxied, '01') },
  });
  t.is(response.status, 401);
  const span = await serverSpan(proxied);
  t.is(span.name, 'GET /ops/system');
  t.is(span.attributes['url.path'], '/ops/system');
  t.is(span.attributes['client.address'], '198.51.100.23');
  t.is(span.resource['service.version'], (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version);
  t.false(Object.values(span.attributes).some((value) => String(value).includes('not-recorded')));

  t.false((await exportedSoFar()).some((each) => each.traceId === outsider));
});

test("a not-sampled traceparent keeps the caller's trace id as the request id and the log line's trace_id, from a proxy or an outsider", async (t) => {
  for (const localAddress of [PROXY, OUTSIDER]) {
    const traceId = hex(16);
    const response = await send(cluster.url, {
      path: '/auth/sign-in',
      localAddress,
      headers: { traceparent: traceparent(traceId, '00') },
      body: { email: 'nobody@example.com', password: 'wrong-password' },
    });
    t.is(response.status, 401);
    t.is(response.headers['x-request-id'], traceId);
    t.is((response.body as { request_id: string }).request_id, traceId);
    const line = await accessLine(traceId);
    t.is(line.trace_id, traceId);
    // Not sampled here: no span of this process to point at.
    t.is(line.span_id, undefined);
  }
});

test('probes and the metrics port make no spans, even asked by a trusted proxy to', async (t) => {
  const traceIds: string[] = [];
  for (const path of ['/livez', '/readyz', '/readyz?verbose']) {
    const traceId = hex(16);
    traceIds.push(traceId);
    const response = await send(cluster.url, { method: 'GET', path, localAddress: PROXY, headers: { traceparent: traceparent(traceId, '01') } });
    t.is(response.status, 200, path);
  }
  const metricsTrace = hex(16);
  traceIds.push(metricsTrace);
  const metrics = await fetch(cluster.metricsUrl, { headers: { traceparent: traceparent(metricsTrace, '01') } });
  t.is(metrics.status, 200);
  await metrics.text();
  const spans = await exportedSoFar();
  t.false(spans.some((span) => traceIds.includes(span.traceId)));
  // Nothing in the primary, which serves /metrics, is a server span.
  t.false(spans.some((span) => span.kind === 2 && span.resource['backplane.role'] === 'primary'));
});

test('malformed, all-zero, upper-case and huge traceparents are treated as absent, never a 500', async (t) => {
  const traceId = hex(16);
  const hostile = [
    'not-a-traceparent',
    `00-${'0'.repeat(32)}-${hex(8)}-01`,
    `00-${traceId}-${'0'.repeat(16)}-01`,
    `00-${traceId.toUpperCase().replace(/^./, 'F')}-${hex(8).toUpperCase().replace(/^./, 'E')}-01`,
    `00-${traceId}-${hex(8)}-01-trailing`,
    `00-${traceId}-${hex(8)}-01, 00-${hex(16)}-${hex(8)}-01`,
    `00-${'a'.repeat(8_000)}-${hex(8)}-01`,
  ];
  for (const value of hostile) {
    const response = await send(cluster.url, {
      method: 'GET',
      path: '/ops/system',
      localAddress: PROXY,
      headers: { traceparent: value, tracestate: `k=${'v'.repeat(4_000)}` },
    });
    t.is(response.status, 401, value.slice(0, 60));
    t.regex(String(response.headers['x-request-id']), UUID);
    t.is((await accessLine(String(response.headers['x-request-id']))).trace_id, undefined);
  }
  // Over Node's header limit (16 KiB) the parser refuses it: a 431 problem, not a 500.
  const oversized = await send(cluster.url, {
    method: 'GET',
    path: '/ops/system',
    localAddress: PROXY,
    headers: { traceparent: `00-${'a'.repeat(20_000)}-${hex(8)}-01` },
  }).catch((error: Error) => ({ status: 0, headers: {}, body: { error: error.message } }) as PlainResponse);
  t.is(oversized.status, 431);
  // None of them was followed: at ratio 0 a parsed trusted traceparent would have been exported.
  const spans = await exportedSoFar();
  t.false(spans.some((span) => span.traceId === traceId || span.traceId === '0'.repeat(32)));
});

test("a refusal answered before the routes keeps the caller's trace id too", async (t) => {
  // One client behind the proxy spends its budget of POSTs under /auth (auth.ip_requests_per_minute, 60).
  const client = '198.51.100.99';
  let status = 0;
  for (let sent = 0; sent < 200 && status !== 429; sent += 1) {
    status = (await send(cluster.url, { path: '/auth/not-a-route', localAddress: PROXY, forwardedFor: client, body: {} })).status;
  }
  t.is(status, 429);
  const traceId = hex(16);
  const refused = await send(cluster.url, {
    path: '/auth/not-a-route',
    localAddress: PROXY,
    forwardedFor: client,
    headers: { traceparent: traceparent(traceId, '00') },
    body: {},
  });
  t.is(refused.status, 429);
  t.is(refused.headers['x-request-id'], traceId);
  t.is((await accessLine(traceId)).trace_id, traceId);
});
