import type { IncomingMessage } from 'node:http';
import { randomBytes } from 'node:crypto';
import test from 'ava';
import { ROOT_CONTEXT, type SpanContext, SpanKind, TraceFlags, trace } from '@opentelemetry/api';
import { SamplingDecision, TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace-base';
import { PooledIdGenerator } from '../../src/platform/tracing/ids.ts';
import { TrustedParentSampler, samplerFromEnv } from '../../src/platform/tracing/sampler.ts';
import { startServerSpan, urlPath } from '../../src/platform/tracing/serverSpan.ts';
import { trustRemoteParent } from '../../src/platform/tracing/trustedParent.ts';
import { recordSpans } from './memorySpans.ts';

// Issue 45: a caller's traceparent decides sampling only when a trusted proxy sent it. The request
// frame's span and the sampler, in this process at ratio 0 (parentbased_traceidratio, 0): only a
// trusted proxy's sampled traceparent makes a span here. One SDK per process, so serial.

const PROXY = '10.0.0.1';
const ratioZero = samplerFromEnv({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' });
const recorded = recordSpans(new TrustedParentSampler(ratioZero, new PooledIdGenerator()));
const trustedPeer = (request: IncomingMessage) => request.socket.remoteAddress === PROXY;

const hex = (bytes: number) => randomBytes(bytes).toString('hex');
const traceparent = (traceId: string, parentId: string, flags: '00' | '01') => `00-${traceId}-${parentId}-${flags}`;

/** A request as Node hands it to the frame: lower-case header names, the socket's peer. */
function request(headers: Record<string, string>, peer = '203.0.113.5', url = '/ops/system?verbose=1'): IncomingMessage {
  return { headers, url, httpVersion: '1.1', socket: { remoteAddress: peer } } as unknown as IncomingMessage;
}

/** A trace id a caller chose so that its four 32-bit words cancel out: a ratio sampler on it says yes at any ratio above 0. */
function steeredTraceId(): string {
  const [a, b, c] = [randomBytes(4).readUInt32BE(), randomBytes(4).readUInt32BE(), randomBytes(4).readUInt32BE()];
  return [a, b, c, (a ^ b ^ c) >>> 0].map((word) => word.toString(16).padStart(8, '0')).join('');
}

const remoteParent = (traceId: string, flags: TraceFlags): SpanContext => ({ traceId, spanId: hex(8), traceFlags: flags, isRemote: true });

test.serial("an untrusted caller's sampled traceparent at ratio 0 makes no span, yet the request keeps its trace id", (t) => {
  recorded.reset();
  const traceId = hex(16);
  const span = startServerSpan(request({ traceparent: traceparent(traceId, hex(8), '01') }), 'GET', trustedPeer);
  t.is(span.traceId, traceId);
  span.run(() => t.is(trace.getActiveSpan(), undefined));
  span.end('/ops/system', 200, '203.0.113.5');
  t.is(recorded.spans().length, 0);
});

test.serial("a trusted proxy's sampled traceparent is followed at ratio 0: the span continues it with the path and the client address", (t) => {
  recorded.reset();
  const [traceId, parentId] = [hex(16), hex(8)];
  const span = startServerSpan(request({ traceparent: traceparent(traceId, parentId, '01'), tracestate: 'vendor=opaque' }, PROXY), 'GET', trustedPeer);
  t.is(span.traceId, traceId);
  span.end('/ops/system', 200, '198.51.100.7');
  const [exported] = recorded.spans();
  t.is(exported?.name, 'GET /ops/system');
  t.is(exported?.spanContext().traceId, traceId);
  t.is(exported?.parentSpanContext?.spanId, parentId);
  t.is(exported?.spanContext().traceState?.serialize(), 'vendor=opaque');
  t.like(exported?.attributes, { 'url.path': '/ops/system', 'client.address': '198.51.100.7', 'http.route': '/ops/system', 'http.response.status_code': 200 });
});

test.serial('a not-sampled traceparent keeps its trace id for the request, from a trusted proxy or anyone, and makes no span', (t) => {
  recorded.reset();
  for (const peer of [PROXY, '203.0.113.5']) {
    const traceId = hex(16);
    const span = startServerSpan(request({ traceparent: traceparent(traceId, hex(8), '00') }, peer), 'POST', trustedPeer);
    t.is(span.traceId, traceId, peer);
    span.end('/auth/sign-in', 401, peer);
  }
  t.is(recorded.spans().length, 0);
});

test.serial('hostile traceparents are treated as absent: no trace id, no span, nothing thrown', (t) => {
  recorded.reset();
  const [traceId, parentId] = [hex(16), hex(8)];
  const hostile = [
    'garbage',
    '',
    traceparent('0'.repeat(32), parentId, '01'),
    traceparent(traceId, '0'.repeat(16), '01'),
    traceparent(traceId.toUpperCase().replace(/^./, 'A'), parentId, '01'),
    `ff-${traceId}-${parentId}-01`,
    `${traceparent(traceId, parentId, '01')}-extra`,
    `00-${traceId}-${parentId}`,
    `${traceparent(traceId, parentId, '01')}, ${traceparent(hex(16), hex(8), '01')}`,
    `00-${'a'.repeat(16_000)}-${parentId}-01`,
    `${traceparent(traceId, parentId, '01')}${' '.repeat(8_000)}`,
  ];
  for (const value of hostile) {
    const span = startServerSpan(request({ traceparent: value, tracestate: 'x'.repeat(8_000), baggage: 'k=v,'.repeat(2_000) }, PROXY), 'GET', trustedPeer);
    t.is(span.traceId, undefined, value.slice(0, 80));
    span.end('unmatched', 404, PROXY);
  }
  t.is(recorded.spans().length, 0);
});

test('url.path is the path as sent, without query or fragment, at most 256 characters', (t) => {
  t.is(urlPath('/auth/providers/acme/callback?code=secret&state=x'), '/auth/providers/acme/callback');
  t.is(urlPath('/docs#section'), '/docs');
  t.is(urlPath('/a%20b'), '/a%20b');
  t.is(urlPath('http://backplane.example/ops/system?verbose=1'), '/ops/system');
  t.is(urlPath('*'), '*');
  t.is(urlPath(undefined), '/');
  t.is(urlPath(`/${'x'.repeat(5_000)}?q=1`).length, 256);
});

test('a server span of an untrusted caller is decided on an id of ours, not on the trace id the caller chose', (t) => {
  const ratio = samplerFromEnv({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.02' });
  const sampler = new TrustedParentSampler(ratio, new PooledIdGenerator());
  const plain = new TraceIdRatioBasedSampler(0.02);
  const draws = 2_000;
  let sampled = 0;
  for (let index = 0; index < draws; index += 1) {
    const traceId = steeredTraceId();
    // The ratio sampler alone would take every one of them: the trace id alone decides it.
    t.is(plain.shouldSample(ROOT_CONTEXT, traceId).decision, SamplingDecision.RECORD_AND_SAMPLED);
    // Flags 00 too: an untrusted caller's flag is ignored either way, and the trace id must not decide instead.
    const parent = trace.setSpanContext(ROOT_CONTEXT, remoteParent(traceId, index % 2 ? TraceFlags.SAMPLED : TraceFlags.NONE));
    if (sampler.shouldSample(parent, traceId, 'POST', SpanKind.SERVER, {}, []).decision === SamplingDecision.RECORD_AND_SAMPLED) {
      sampled += 1;
    }
  }
  // About 2% (40 of 2,000; the chance of 0 or of 200 and more is below 1e-17).
  t.true(sampled > 0 && sampled < 200, `${sampled} of ${draws} sampled`);
});

test('a trusted or non-server remote parent is followed as configured: a task thread continues its submitter', (t) => {
  const sampler = new TrustedParentSampler(ratioZero, new PooledIdGenerator());
  const parent = trace.setSpanContext(ROOT_CONTEXT, remoteParent(hex(16), TraceFlags.SAMPLED));
  const decide = (context: typeof parent, kind: SpanKind) => sampler.shouldSample(context, hex(16), 'span', kind, {}, []).decision;
  t.is(decide(parent, SpanKind.SERVER), SamplingDecision.NOT_RECORD);
  t.is(decide(trustRemoteParent(parent), SpanKind.SERVER), SamplingDecision.RECORD_AND_SAMPLED);
  t.is(decide(parent, SpanKind.INTERNAL), SamplingDecision.RECORD_AND_SAMPLED);
  const unsampled = trustRemoteParent(trace.setSpanContext(ROOT_CONTEXT, remoteParent(hex(16), TraceFlags.NONE)));
  t.is(decide(unsampled, SpanKind.SERVER), SamplingDecision.NOT_RECORD);
});

test('traceidratio decides on the trace id without a parent or with a remote one, and a span below a local one follows it', (t) => {
  const sampler = samplerFromEnv({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.5' });
  const plain = new TraceIdRatioBasedSampler(0.5);
  for (let index = 0; index < 200; index += 1) {
    const traceId = hex(16);
    const expected = plain.shouldSample(ROOT_CONTEXT, traceId).decision;
    t.is(sampler.shouldSample(ROOT_CONTEXT, traceId, 'job', SpanKind.INTERNAL, {}, []).decision, expected);
    const remote = trace.setSpanContext(ROOT_CONTEXT, remoteParent(traceId, expected === SamplingDecision.NOT_RECORD ? TraceFlags.SAMPLED : TraceFlags.NONE));
    t.is(sampler.shouldSample(remote, traceId, 'GET', SpanKind.SERVER, {}, []).decision, expected);
    const local = trace.setSpanContext(ROOT_CONTEXT, { traceId, spanId: hex(8), traceFlags: TraceFlags.SAMPLED });
    t.is(sampler.shouldSample(local, traceId, 'select accounts', SpanKind.CLIENT, {}, []).decision, SamplingDecision.RECORD_AND_SAMPLED);
  }
});

test.serial('an unsupported sampler or ratio is refused with a warning, as the specification defaults', async (t) => {
  const warnings: string[] = [];
  const onWarning = (warning: Error) => warnings.push(warning.message);
  process.on('warning', onWarning);
  t.regex(samplerFromEnv({ OTEL_TRACES_SAMPLER: 'jaeger_remote' }).toString(), /^ParentBased\{root=AlwaysOnSampler/);
  t.regex(
    samplerFromEnv({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '2' }).toString(),
    /^ParentBased\{root=TraceIdRatioBased\{1\}/,
  );
  t.regex(samplerFromEnv({}).toString(), /^ParentBased\{root=AlwaysOnSampler/);
  t.is(samplerFromEnv({ OTEL_TRACES_SAMPLER: 'always_off' }).toString(), 'AlwaysOffSampler');
  await new Promise((resolve) => setImmediate(resolve));
  process.off('warning', onWarning);
  t.true(warnings.some((message) => message.includes('jaeger_remote')));
  t.true(warnings.some((message) => message.includes('OTEL_TRACES_SAMPLER_ARG') && message.includes('"2"')));
  t.is(warnings.length, 2);
});
