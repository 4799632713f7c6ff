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
// BENCH_PACE=saturated runs the requests back to back instead, one event-loop turn each, as a
// saturated instance does: on this 2-core VM every wake-up of a steady loop runs its code cold (a
// loop doing nothing costs 250 µs a wake-up), which inflates any code's cost several times over,
// while the service's own cost per request, the figure's denominator, is read saturated.
// BENCH_PACE=tight times the sampled-out request alone (0% settings, no statement spans): calls
// back to back with no yield, the least noisy figure this machine gives for the per-request frame.
// BENCH_BASE_ROOT=<another built checkout> adds its 0% and 10% settings, for a before and after.
// node --import tsx bench/system/tracingCost.ts
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type * as Deadline from '../../src/platform/db/deadline.ts';
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
const pace = process.env.BENCH_PACE ?? 'steady';
const saturated = pace === 'saturated';
const tight = pace === 'tight';
const baseRoot = process.env.BENCH_BASE_ROOT;

if (process.env.TRACING_COST_CHILD) {
  await child();
} else {
  await parent();
}

/** One setting's loop: prints the CPU per request (µs) over `seconds`, after a warm-up that also loads the exporter. */
async function child(): Promise<void> {
  const children = Number(process.env.TRACING_COST_CHILD_SPANS);
  const traced = process.env.OTEL_EXPORTER_OTLP_ENDPOINT !== undefined;
  const from = process.env.TRACING_COST_ROOT ?? root;
  const { startTracing, flushTracing } = (await import(join(from, 'dist/platform/tracing/setup.js'))) as typeof Setup;
  const { startServerSpan } = (await import(join(from, 'dist/platform/tracing/serverSpan.js'))) as typeof ServerSpan;
  const { tracer } = (await import(join(from, 'dist/platform/tracing/tracer.js'))) as typeof Tracer;
  const { DiagLogLevel, diag, trace } = await import('@opentelemetry/api');
  // As in an instance, in every setting: the readiness probe's deadline has enabled an
  // AsyncLocalStorage, so promise hooks are on before tracing's own context manager runs. Without
  // it the first sampled span's context would turn them on for the loop's every promise, and 1%
  // sampling would read as costing 3 µs a request that no instance pays.
  const { withDatabaseDeadline } = (await import(join(from, 'dist/platform/db/deadline.js'))) as typeof Deadline;
  await withDatabaseDeadline(1_000, async () => undefined);
  if (traced) {
    await startTracing({ role: 'instance', instanceId: 'bench' });
    // A span the full queue dropped is one this setting did not pay to export: say so beside the figure.
    const warn = (message: string) => /Dropped \d+ spans/.test(message) && process.stderr.write(`${process.env.OTEL_TRACES_SAMPLER}: ${message}\n`);
    const quiet = () => undefined;
    diag.setLogger({ error: quiet, warn, info: quiet, debug: quiet, verbose: quiet }, DiagLogLevel.WARN);
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
  // Requests in turns of `perTurn`, each turn followed by `pause`: steady (a hundredth of a second's
  // requests, then 10 ms), saturated (one, then the event loop's turn), tight (many, no pause).
  const [perTurn, pause] = tight
    ? [10_000, undefined]
    : saturated
      ? [1, () => new Promise((resolve) => setImmediate(resolve))]
      : [rate / 100, () => new Promise((resolve) => setTimeout(resolve, 10))];
  const loop = async (ms: number) => {
    const until = performance.now() + ms;
    let requests = 0;
    while (performance.now() < until) {
      for (let index = 0; index < perTurn; index += 1) {
        oneRequest();
      }
      requests += perTurn;
      await pause?.();
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
  const all: Setting[] = [
    { name: 'none (no tracing code)', env: {} },
    { name: 'on, 0% (every request sampled out)', env: { ...on, OTEL_TRACES_SAMPLER: 'parentbased_always_off' } },
    { name: 'on, 10%', env: { ...on, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' } },
    { name: 'on, 100%', env: { ...on, OTEL_TRACES_SAMPLER: 'parentbased_always_on' } },
    ...(baseRoot
      ? [
          { name: 'base: on, 0%', env: { ...on, OTEL_TRACES_SAMPLER: 'parentbased_always_off', TRACING_COST_ROOT: baseRoot } },
          {
            name: 'base: on, 10%',
            env: { ...on, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1', TRACING_COST_ROOT: baseRoot },
          },
        ]
      : []),
  ];
  // Tight: sampled spans would pile up unexported in a loop that never yields, so only what samples none.
  const settings = tight ? all.filter((setting) => [undefined, 'parentbased_always_off'].includes(setting.env.OTEL_TRACES_SAMPLER)) : all;
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
      console.log(
        `\n${children} statement span(s) per sampled request, ${tight ? 'back to back, never yielding' : saturated ? 'back to back' : `${rate} requests a second`}, ${rounds} rounds of ${seconds} s:`,
      );
      for (const [name, values] of figures) {
        console.log(
          `  ${name.padEnd(36)} ${(median(values) - none).toFixed(2).padStart(6)} µs CPU per request over none (rounds: ${values.map((value) => value.toFixed(2)).join(' ')})`,
        );
      }
      results.push({
        statement_spans: children,
        us_over_none: Object.fromEntries([...figures].map(([name, values]) => [name, Number((median(values) - none).toFixed(2))])),
        rounds: Object.fromEntries(figures),
      });
    }
    console.log(`\nexported: ${JSON.stringify(sink.received())}`);
    console.log(
      `written: ${writeResults('tracing-cost', { when: new Date().toISOString(), pace: pace === 'steady' ? rate : pace, base: baseRoot, rounds, seconds, results, exported: sink.received() })}`,
    );
  } finally {
    await sink.close();
  }
}
