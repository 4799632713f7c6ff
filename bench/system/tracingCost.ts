// bench/system/tracingCost.ts: what tracing itself costs a request, measured apart from the
// request (issue 34). The system bench's tracing rows compare whole services, and on a 2-core
// machine two loads of one service differ by more than the 3% the goal allows; this measures the
// tracing layer alone, which is small, with the same code the request frame runs: the server span
// (startServerSpan: extract, sampler, span, end), child spans where a statement would make them,
// and the SDK's batching and OTLP/protobuf export to a loopback sink in another process.
// Each setting runs in its own process at a steady rate below saturation (no span is dropped), in
// turns, round after round; the figure is the process's CPU per request minus that of the same
// loop with no tracing code loaded. BENCH_ROUNDS=3, BENCH_SECONDS=8, BENCH_RATE=5000 requests a
// second, BENCH_CHILD_SPANS=0,3 (statement spans per sampled request: /readyz makes none).
// node --import tsx bench/system/tracingCost.ts
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type * as Setup from '../../src/platform/tracing/setup.ts';
import type * as ServerSpan from '../../src/platform/tracing/serverSpan.ts';
import type * as Tracer from '../../src/platform/tracing/tracer.ts';
import { buildService, median, root, writeResults } from '../support/harness.ts';
import { startOtlpSink } from '../support/otlpSink.ts';

interface Setting {
  name: string;
  env: Record<string, string>;
}

const rounds = Number(process.env.BENCH_ROUNDS ?? '3');
const seconds = Number(process.env.BENCH_SECONDS ?? '8');
const rate = Number(process.env.BENCH_RATE ?? '5000');
const childSpans = (process.env.BENCH_CHILD_SPANS ?? '0,3').split(',').map(Number);

if (process.env.TRACING_COST_CHILD) {
  await child();
} else {
  await parent();
}

/** One setting's loop: prints the CPU per request (µs) over `seconds`, after a warm-up that also loads the exporter. */
async function child(): Promise<void> {
  const children = Number(process.env.TRACING_COST_CHILD_SPANS);
  const traced = process.env.OTEL_EXPORTER_OTLP_ENDPOINT !== undefined;
  const { startTracing, flushTracing } = (await import(join(root, 'dist/platform/tracing/setup.js'))) as typeof Setup;
  const { startServerSpan } = (await import(join(root, 'dist/platform/tracing/serverSpan.js'))) as typeof ServerSpan;
  const { tracer } = (await import(join(root, 'dist/platform/tracing/tracer.js'))) as typeof Tracer;
  const { trace } = await import('@opentelemetry/api');
  if (traced) {
    await startTracing({ role: 'instance', instanceId: 'bench' });
  }
  // As an incoming request looks to the span: headers without a traceparent, a plain socket.
  const request = { headers: { host: '127.0.0.1', 'user-agent': 'autocannon', accept: '*/*' }, socket: {}, httpVersion: '1.1' } as never;
  // The request's own work is the same in every setting, so it is left out: what differs is tracing.
  const statement = () => {
    // Like the pg instrumentation (requireParentSpan): a statement makes a span only under one.
    if (trace.getActiveSpan()) {
      tracer.startSpan('select accounts', { attributes: { 'db.system': 'postgresql', 'db.query.summary': 'select accounts' } }).end();
    }
  };
  const statements = () => {
    for (let index = 0; index < children; index += 1) {
      statement();
    }
  };
  const oneRequest = traced
    ? () => {
        const span = startServerSpan(request, 'GET');
        span.run(statements);
        span.end('/ops/system', 200);
      }
    : statements;
  const perTick = rate / 100;
  const loop = async (ms: number) => {
    const until = performance.now() + ms;
    let requests = 0;
    while (performance.now() < until) {
      for (let index = 0; index < perTick; index += 1) {
        oneRequest();
      }
      requests += perTick;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return requests;
  };
  await loop(2_000);
  await flushTracing(10_000);
  const before = process.cpuUsage();
  const requests = await loop(seconds * 1_000);
  // Spans still batched are part of these requests' cost.
  await flushTracing(10_000);
  const used = process.cpuUsage(before);
  process.stdout.write(`${((used.user + used.system) / requests).toFixed(3)}\n`);
  process.exit(0);
}

async function parent(): Promise<void> {
  buildService();
  const sink = await startOtlpSink();
  const on = { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_SERVICE_NAME: 'backplane-bench' };
  const settings: Setting[] = [
    { name: 'none (no tracing code)', env: {} },
    { name: 'on, 0% (every request sampled out)', env: { ...on, OTEL_TRACES_SAMPLER: 'parentbased_always_off' } },
    { name: 'on, 10%', env: { ...on, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' } },
    { name: 'on, 100%', env: { ...on, OTEL_TRACES_SAMPLER: 'parentbased_always_on' } },
  ];
  const clean = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('OTEL_')));
  const run = (setting: Setting, children: number) =>
    new Promise<number>((resolve, reject) => {
      const spawned = spawn(process.execPath, ['--import', 'tsx', import.meta.filename], {
        cwd: root,
        env: { ...clean, ...setting.env, TRACING_COST_CHILD: '1', TRACING_COST_CHILD_SPANS: String(children) },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let out = '';
      spawned.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      spawned.on('exit', (code) => (code === 0 ? resolve(Number(out.trim())) : reject(new Error(`${setting.name}: exit ${code}`))));
    });
  const results: Array<{ statement_spans: number; us_over_none: Record<string, number>; rounds: Record<string, number[]> }> = [];
  try {
    for (const children of childSpans) {
      const figures = new Map<string, number[]>();
      for (let round = 0; round < rounds; round += 1) {
        for (const setting of round % 2 ? [...settings].reverse() : settings) {
          figures.set(setting.name, [...(figures.get(setting.name) ?? []), await run(setting, children)]);
        }
      }
      const none = median(figures.get(settings[0]!.name)!);
      console.log(`\n${children} statement span(s) per sampled request, ${rate} requests a second, ${rounds} rounds of ${seconds} s:`);
      for (const [name, values] of figures) {
        console.log(`  ${name.padEnd(36)} ${(median(values) - none).toFixed(2).padStart(6)} µs CPU per request over none (rounds: ${values.map((value) => value.toFixed(2)).join(' ')})`);
      }
      results.push({
        statement_spans: children,
        us_over_none: Object.fromEntries([...figures].map(([name, values]) => [name, Number((median(values) - none).toFixed(2))])),
        rounds: Object.fromEntries(figures),
      });
    }
    console.log(`\nexported: ${JSON.stringify(sink.received())}`);
    console.log(`written: ${writeResults('tracing-cost', { when: new Date().toISOString(), rate, rounds, seconds, results, exported: sink.received() })}`);
  } finally {
    await sink.close();
  }
}
