import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import test from 'ava';
import { tracingEnabled } from '../../src/platform/tracing/setup.ts';
import { type TestCluster, startCluster, waitFor } from '../support/cluster.ts';
import { type TestDatabase, createTestDatabase } from '../support/database.ts';
import { send } from '../support/forwarded.ts';
import { startTestInstance } from '../support/instance.ts';
import { PUBLIC_URL, type TestProvider, authorizeAtProvider, onInstance, startTestProvider } from '../support/oidcProvider.ts';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '../support/otlpReceiver.ts';
import { accountWithToken, bearer } from '../support/tokens.ts';
import { flowCookieOf } from '../modules/identities/support.ts';

// Issue 34: one cluster (two instances and the primary) exports to a loopback OTLP receiver in the
// default protocol, http/protobuf; every case reads what that one start-up sent. Traced requests go
// through node:http, not fetch: once the last case loads the SDK here, fetch would inject its own.
const POD = 'backplane-7d9f-test';
const EMAIL = 'traced.person@example.com';
let database: TestDatabase;
let receiver: OtlpReceiver;
let cluster: TestCluster;
let provider: TestProvider;

test.before(async () => {
  database = await createTestDatabase();
  receiver = await startOtlpReceiver();
  provider = await startTestProvider('acme');
  cluster = await startCluster(database.url, 2, {
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    // Exported within a fifth of a second instead of five, so the cases wait little.
    OTEL_BSP_SCHEDULE_DELAY: '200',
    POD_NAME: POD,
    OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=test',
    // The cases' requests come from 127.0.0.1: a trusted proxy, whose traceparent decides (issue 45).
    APP_TRUSTED_PROXIES: '127.0.0.1/32',
    APP_OIDC_PROVIDERS: JSON.stringify([provider.entry('acme')]),
    APP_PUBLIC_URL: PUBLIC_URL,
  });
});

test.after.always(async () => {
  await cluster?.stop();
  await receiver?.close();
  await provider?.stop();
  await database?.drop();
});

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

/** A failed sign-in (statements, a rate-limit decision, a problem) sent with a traceparent. */
async function tracedSignIn(headers: Record<string, string> = {}) {
  const traceId = hex(16);
  const parentId = hex(8);
  const response = await send(cluster.url, {
    path: `/auth/sign-in?email=${encodeURIComponent(EMAIL)}`,
    headers: { traceparent: `00-${traceId}-${parentId}-01`, tracestate: 'vendor=opaque', ...headers },
    body: { email: EMAIL, password: 'not-the-password' },
  });
  const problem = response.body as { code: string; request_id: string };
  const server = (spans: ReceivedSpan[]) => spans.find((span) => span.traceId === traceId && span.kind === 2);
  // The server span ends after the statements', so once it is here they are too (same batch or earlier).
  const spans = await receiver.waitForSpans((received) => server(received) !== undefined, 'the server span');
  return { traceId, parentId, response, problem, trace: spans.filter((span) => span.traceId === traceId), server: server(spans)! };
}

/** The cluster's JSON log lines so far. */
const logLines = () =>
  cluster
    .output()
    .split('\n')
    .filter((each) => each.startsWith('{'))
    .map((each) => JSON.parse(each) as Record<string, unknown>);

/** True when `span` descends from `ancestor` within `trace`. */
function descends(trace: ReceivedSpan[], span: ReceivedSpan, ancestor: ReceivedSpan): boolean {
  const byId = new Map(trace.map((each) => [each.spanId, each]));
  for (let at: ReceivedSpan | undefined = span; at; at = byId.get(at.parentSpanId)) {
    if (at.parentSpanId === ancestor.spanId) {
      return true;
    }
  }
  return false;
}

test('a request with a traceparent: a server span named by its route continues the trace, its statements are child spans', async (t) => {
  const { parentId, response, trace, server } = await tracedSignIn();
  t.is(response.status, 401);
  t.is(server.name, 'POST /auth/sign-in');
  t.is(server.parentSpanId, parentId);
  t.is(server.traceState, 'vendor=opaque');
  t.is(server.attributes['http.route'], '/auth/sign-in');
  t.is(server.attributes['http.request.method'], 'POST');
  t.is(server.attributes['url.scheme'], 'http');
  t.is(server.attributes['network.protocol.version'], '1.1');
  t.is(server.attributes['http.response.status_code'], 401);
  // The path without its query (which holds the email), and the client (issue 45).
  t.is(server.attributes['url.path'], '/auth/sign-in');
  t.is(server.attributes['client.address'], '127.0.0.1');
  const statements = trace.filter((span) => span.attributes['db.system'] === 'postgresql');
  t.true(statements.length >= 1);
  t.true(statements.every((span) => descends(trace, span, server)));
  // Each is named after its statement (prepared name, or operation and table), not `pg.query:SELECT`.
  t.true(
    statements.every((span) => span.name === span.attributes['db.query.summary'] && /^[a-z_]+( [a-z_.]+)?$/.test(span.name)),
    statements.map((span) => span.name).join(', '),
  );
  // Parameter values stay out: no attribute of the trace holds the email, the password or the query.
  const values = trace.flatMap((span) => Object.values(span.attributes).map(String));
  t.false(values.some((value) => value.includes(EMAIL) || value.includes('not-the-password') || value.includes('traced.person')));
});

test('spans carry the service and its version, the instance id, the pod and OTEL_RESOURCE_ATTRIBUTES', async (t) => {
  const { server } = await tracedSignIn();
  t.is(server.resource['service.name'], 'backplane');
  t.regex(String(server.resource['service.version']), /^\d+\.\d+\.\d+/);
  t.regex(String(server.resource['service.instance.id']), /^[0-9a-f]{16}$/);
  t.is(server.resource['k8s.pod.name'], POD);
  t.is(server.resource['backplane.role'], 'instance');
  t.is(server.resource['deployment.environment.name'], 'test');
});

test('a problem record and the log lines of a traced request lead to its trace', async (t) => {
  const { traceId, problem, server } = await tracedSignIn();
  t.is(problem.code, 'invalid_credentials');
  // No X-Request-Id came in: the request id is the trace id.
  t.is(problem.request_id, traceId);
  const line = await waitFor(async () => logLines().find((each) => each.request_id === traceId), 10_000, 'the access log line');
  t.is(line.trace_id, traceId);
  t.is(line.span_id, server.spanId);
});

test('an incoming X-Request-Id is kept, and its log line carries the trace id beside it', async (t) => {
  const requestId = `lb-${hex(6)}`;
  const { traceId, problem, response } = await tracedSignIn({ 'X-Request-Id': requestId });
  t.is(problem.request_id, requestId);
  t.is(response.headers['x-request-id'], requestId);
  const line = await waitFor(async () => logLines().find((each) => each.request_id === requestId), 10_000, 'the access log line');
  t.is(line.trace_id, traceId);
});

test("a request its caller sampled out (traceparent flags 00) makes no span, of its own or of its statements, and keeps the caller's trace id", async (t) => {
  const traceId = hex(16);
  const response = await send(cluster.url, {
    path: '/auth/sign-in',
    headers: { traceparent: `00-${traceId}-${hex(8)}-00` },
    body: { email: EMAIL, password: 'not-the-password' },
  });
  t.is(response.status, 401);
  // Issue 45: the caller's trace id is the request id and the log line's trace_id, sampled or not.
  t.is((response.body as { request_id: string }).request_id, traceId);
  // Each instance exports its spans in the order they end: once a later request's span has come
  // from both instances, anything the sampled-out one made would have come too. Unmatched paths,
  // not sign-ins (the other cases' requests under /auth share the per-address budget) nor probes (never traced).
  const instances = new Set<string>();
  for (let tries = 0; tries < 40 && instances.size < 2; tries += 1) {
    const barrier = hex(16);
    await send(cluster.url, { method: 'GET', path: '/trace-barrier', headers: { traceparent: `00-${barrier}-${hex(8)}-01` } });
    const spans = await receiver.waitForSpans((received) => received.some((span) => span.traceId === barrier), "the barrier's span");
    instances.add(String(spans.find((span) => span.traceId === barrier)!.resource['service.instance.id']));
  }
  t.is(instances.size, 2);
  t.false(receiver.spans().some((span) => span.traceId === traceId));
  const line = await waitFor(async () => logLines().find((each) => each.request_id === traceId), 10_000, 'the access log line');
  t.is(line.trace_id, traceId);
  t.is(line.span_id, undefined);
});

test("the primary's spans arrive: its start-up migration, with its statements", async (t) => {
  const spans = await receiver.waitForSpans((received) => received.some((span) => span.name === 'migrate'), 'the migrate span');
  const migrate = spans.find((span) => span.name === 'migrate')!;
  t.is(migrate.resource['backplane.role'], 'primary');
  t.is(migrate.resource['k8s.pod.name'], POD);
  t.true(spans.some((span) => span.parentSpanId === migrate.spanId && span.attributes['db.system'] === 'postgresql'));
});

test('the default protocol, http/protobuf, delivers', async (t) => {
  const spans = await receiver.waitForSpans((received) => received.some((span) => span.name === 'migrate'), 'the primary migrate span');
  // The cluster sends the default protocol (the in-process instance of the last case sends JSON).
  t.true(receiver.contentTypes().has('application/x-protobuf'));
  t.true(spans.some((span) => span.resource['backplane.role'] === 'primary'));
});

test("a provider call carries the request's trace to the provider and is a client span of it", async (t) => {
  provider.addPerson('traced-sub', 'traced.provider@example.com');
  const start = await fetch(`${cluster.url}/auth/providers/acme/start`, { redirect: 'manual' });
  t.is(start.status, 302);
  const returned = await authorizeAtProvider(start.headers.get('Location')!, 'traced-sub');
  const traceId = hex(16);
  const callback = await send(onInstance(returned, cluster.url), {
    method: 'GET',
    path: returned.pathname + returned.search,
    headers: { Cookie: flowCookieOf(start), traceparent: `00-${traceId}-${hex(8)}-01` },
  });
  t.is(callback.status, 200);
  const spans = await receiver.waitForSpans((received) => received.some((span) => span.traceId === traceId && span.kind === 2), 'the callback span');
  const trace = spans.filter((span) => span.traceId === traceId);
  const server = trace.find((span) => span.kind === 2)!;
  t.regex(server.name, /^GET \/auth\/providers\/\S+\/callback$/);
  const calls = trace.filter((span) => span.kind === 3 && span.attributes['http.request.method'] !== undefined);
  t.true(calls.length >= 1);
  t.true(calls.every((span) => descends(trace, span, server)));
  // The provider saw the trace: its token endpoint was called with this trace's traceparent.
  t.true(provider.traceparents.some((seen) => seen.path.startsWith('/token') && seen.traceparent?.split('-')[1] === traceId));
});

test("a decision batch of the pod's primary is a span linked to the wait of the request it answered", async (t) => {
  const { trace, server } = await tracedSignIn();
  const waits = trace.filter((span) => span.name === 'ratelimit decide' && descends(trace, span, server));
  t.true(waits.length >= 1);
  const batches = await receiver.waitForSpans(
    (received) =>
      received.some((span) => span.name === 'ratelimit decide batch' && span.links.some((link) => waits.some((wait) => wait.spanId === link.spanId))),
    'the decision batch span',
  );
  const batch = batches.find((span) => span.name === 'ratelimit decide batch' && span.links.some((link) => waits.some((wait) => wait.spanId === link.spanId)))!;
  t.is(batch.resource['backplane.role'], 'primary');
  t.true(batch.links.some((link) => link.traceId === server.traceId));
  t.true(batches.some((span) => span.parentSpanId === batch.spanId && span.attributes['db.system'] === 'postgresql'));
});

test('a job run is a root span: its revocation call carries its trace to the provider, its log lines lead to it', async (t) => {
  provider.addPerson('revoked-sub', 'revoked.person@example.com');
  const start = await fetch(`${cluster.url}/auth/providers/acme/start`, { redirect: 'manual' });
  const returned = await authorizeAtProvider(start.headers.get('Location')!, 'revoked-sub');
  const callback = await send(onInstance(returned, cluster.url), {
    method: 'GET',
    path: returned.pathname + returned.search,
    headers: { Cookie: flowCookieOf(start) },
  });
  t.is(callback.status, 200);
  // Deleting the account queues its provider token for revocation by the job auth_revoke_tokens.
  t.is((await send(cluster.url, { method: 'DELETE', path: '/auth/account', headers: bearer(String(callback.body!.access_token)) })).status, 204);
  const { token } = await accountWithToken(database.pool, { roles: ['platform_admin'] });
  // A client span with an HTTP method: the revocation request (statements are client spans too).
  const revocation = (spans: ReceivedSpan[], job: ReceivedSpan) =>
    spans.some(
      (call) => call.kind === 3 && call.traceId === job.traceId && (call.attributes['http.request.method'] ?? call.attributes['http.method']) === 'POST',
    );
  const ready = (received: ReceivedSpan[]) => received.some((span) => span.name === 'job auth_revoke_tokens' && revocation(received, span));
  // Run-now is refused (429) while a run is queued or running and for a minute after it, which the
  // job's own schedule (@every 1m) may just have made on a busy machine: asked again every 2 s
  // until taken, unless a scheduled run answers first (at worst a run that started before the token
  // was queued, its minute after, then this one: within the bound below).
  let taken = false;
  let askedAt = 0;
  const spans = await waitFor(
    async () => {
      if (ready(receiver.spans())) {
        return receiver.spans();
      }
      if (!taken && Date.now() - askedAt >= 2_000) {
        askedAt = Date.now();
        const status = (await send(cluster.url, { path: '/ops/jobs/definitions/auth_revoke_tokens/run', headers: bearer(token) })).status;
        t.true([202, 429].includes(status));
        taken = status === 202;
      }
      return undefined;
    },
    150_000,
    'the job span and its revocation call',
  );
  const job = spans.find((span) => span.name === 'job auth_revoke_tokens' && revocation(spans, span))!;
  t.is(job.parentSpanId, '');
  // The call is made on a task thread, whose spans reach the collector too.
  t.true(spans.some((span) => span.traceId === job.traceId && span.resource['backplane.role'] === 'task'));
  t.regex(String(job.resource['service.instance.id']), /^[0-9a-f]{16}$/);
  t.true(provider.traceparents.some((seen) => seen.path.startsWith('/token/revocation') && seen.traceparent?.split('-')[1] === job.traceId));
  // Its log lines lead to its trace: `job run succeeded` carries the job span's ids.
  const line = await waitFor(
    async () => logLines().find((each) => each.trace_id === job.traceId && each.msg === 'job run succeeded'),
    10_000,
    'the job run log line',
  );
  t.is(line.span_id, job.spanId);
});

// Serial, so they run first and in this order: the second loads the SDK into this process.
test.serial('no OTLP endpoint: no SDK loaded, no span, request ids as before', async (t) => {
  const instance = await startTestInstance(database.url);
  try {
    const response = await fetch(`${instance.url}/auth/sign-in`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', traceparent: `00-${hex(16)}-${hex(8)}-01` },
      body: JSON.stringify({ email: EMAIL, password: 'not-the-password' }),
    });
    const problem = (await response.json()) as { request_id: string };
    t.regex(problem.request_id, /^[0-9a-f-]{36}$/);
    t.false(tracingEnabled());
    // The SDK packages are CommonJS: loaded, they would be in the require cache.
    t.false(Object.keys(createRequire(import.meta.url).cache).some((file) => file.includes('sdk-trace')));
  } finally {
    await instance.drain();
  }
});

test.serial('http/json: an instance in this process sends its server span as JSON', async (t) => {
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url;
  process.env.OTEL_EXPORTER_OTLP_PROTOCOL = 'http/json';
  process.env.OTEL_BSP_SCHEDULE_DELAY = '200';
  const instance = await startTestInstance(database.url);
  try {
    const traceId = hex(16);
    const response = await send(instance.url, {
      path: '/auth/sign-in',
      headers: { traceparent: `00-${traceId}-${hex(8)}-01` },
      body: { email: EMAIL, password: 'not-the-password' },
    });
    t.is(response.status, 401);
    const spans = await receiver.waitForSpans((received) => received.some((span) => span.traceId === traceId && span.kind === 2), 'the JSON server span');
    t.is(spans.find((span) => span.traceId === traceId && span.kind === 2)!.name, 'POST /auth/sign-in');
    t.true(receiver.contentTypes().has('application/json'));
  } finally {
    await instance.drain();
    delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  }
});
