// bench/system/stack.ts: the platform's HTTP stack alone (stackServer.ts, no database) against a bare
// Koa route, each one process, and with BENCH_BASE_ROOT=<another checkout> that checkout's stack
// too; servers take turns round after round (BENCH_ROUNDS=5 of BENCH_SECONDS=4, 20 connections),
// reporting req/s and the server's CPU per request. It builds this checkout (dist/, as the service
// runs); BENCH_BASE_ROOT must be built already. No database: it runs in about two minutes.
// BENCH_TRACING=1 adds the stack with tracing on at 0%, 10% and 100% sampling, exporting to a loopback
// sink (issue 34): at saturation, one process, tracing's cost reads against the stack without it.
// BENCH_TRACING_BATCH_SIZES=128,512 adds 10% rows exporting batches of those sizes.
// BENCH_PROCESSES=3 runs every row as that many processes and reads each round's mean over them: on
// this VM two processes of one build differ by up to 20% CPU per request for their whole life (where
// their code and heap landed), so one process a row reads that as the row's cost.
// node --import tsx bench/system/stack.ts
import { join } from 'node:path';
import autocannon from 'autocannon';
import { cpuMsBetween, treeCpu } from '../ratelimit/cpu.ts';
import { buildService, median, root, startScript, writeResults } from '../support/harness.ts';
import { startOtlpSink } from '../support/otlpSink.ts';

buildService();

const rounds = Number(process.env.BENCH_ROUNDS ?? '5');
const seconds = Number(process.env.BENCH_SECONDS ?? '4');
const base = process.env.BENCH_BASE_ROOT;
const processes = Number(process.env.BENCH_PROCESSES ?? '1');
const batchSizes = (process.env.BENCH_TRACING_BATCH_SIZES ?? '').split(',').filter(Boolean);
const sink = process.env.BENCH_TRACING === '1' ? await startOtlpSink() : undefined;
const stackServer = join(root, 'bench', 'system', 'stackServer.ts');
// No OTEL_* variable of the bench's own environment reaches a row that does not set its own.
const untraced = { OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '' };
const traced = (sampler: string) => ({ ...untraced, OTEL_EXPORTER_OTLP_ENDPOINT: sink!.url, OTEL_TRACES_SAMPLER: sampler, OTEL_TRACES_SAMPLER_ARG: '0.1' });
type Row = { name: string; script: string; env: Record<string, string>; path: string };
// Read against the untraced stack, round by round (BENCH_TRACING=1).
const tracingRows: Row[] = sink
  ? [
      // The same untraced stack again: the noise floor the tracing rows read against.
      { name: 'stack (again)', script: stackServer, env: untraced, path: '/readyz' },
      { name: 'stack, tracing 0%', script: stackServer, env: traced('parentbased_always_off'), path: '/readyz' },
      { name: 'stack, tracing 10%', script: stackServer, env: traced('parentbased_traceidratio'), path: '/readyz' },
      { name: 'stack, tracing 100%', script: stackServer, env: traced('parentbased_always_on'), path: '/readyz' },
      ...batchSizes.map((size) => ({
        name: `stack, tracing 10%, batches of ${size}`,
        script: stackServer,
        env: { ...traced('parentbased_traceidratio'), OTEL_BSP_MAX_EXPORT_BATCH_SIZE: size },
        path: '/readyz',
      })),
    ]
  : [];
const rows: Row[] = [
  { name: 'bare koa', script: join(root, 'bench', 'system', 'bareServer.ts'), env: { BENCH_WORKERS: '1' }, path: '/' },
  { name: 'stack', script: stackServer, env: untraced, path: '/readyz' },
  ...(base ? [{ name: 'stack (base)', script: stackServer, env: { ...untraced, BENCH_STACK_ROOT: base }, path: '/readyz' }] : []),
  ...tracingRows,
];
const servers: Array<{ name: string; path: string; server: Awaited<ReturnType<typeof startScript>> }> = [];
for (let copy = 0; copy < processes; copy += 1) {
  for (const { name, script, env, path } of rows) {
    servers.push({ name, path, server: await startScript(script, env, path) });
  }
}
const figures = new Map<string, Array<{ rate: number; cpuUs: number }>>();
try {
  for (let round = 0; round < rounds; round += 1) {
    const thisRound = new Map<string, Array<{ rate: number; cpuUs: number }>>();
    for (const { name, path, server } of round % 2 ? [...servers].reverse() : servers) {
      const pid = server.child.pid!;
      const before = treeCpu([pid]);
      const result = await autocannon({ url: `${server.url}${path}`, connections: 20, duration: seconds });
      const cpuUs = (cpuMsBetween(before, treeCpu([pid]), pid) * 1000) / Math.max(1, result.requests.total);
      thisRound.set(name, [...(thisRound.get(name) ?? []), { rate: result.requests.average, cpuUs }]);
    }
    // A row's figure for the round: the mean over its processes.
    for (const [name, runs] of thisRound) {
      const mean = (pick: (run: { rate: number; cpuUs: number }) => number) => runs.reduce((sum, run) => sum + pick(run), 0) / runs.length;
      figures.set(name, [...(figures.get(name) ?? []), { rate: mean((run) => run.rate), cpuUs: mean((run) => run.cpuUs) }]);
    }
  }
} finally {
  for (const { server } of servers) {
    await server.stop();
  }
  await sink?.close();
}
const bare = figures.get('bare koa')!;
for (const [name, runs] of figures) {
  const ratios = runs.map((run, round) => Number((run.rate / bare[round]!.rate).toFixed(2)));
  console.log(
    `${name}: median ${Math.round(median(runs.map((r) => r.rate)))} req/s, ${median(runs.map((r) => r.cpuUs)).toFixed(1)} µs CPU per request; req/s vs bare by round ${ratios.join(' ')} (median ${median(ratios)})`,
  );
}
if (sink) {
  // Tracing's cost against the same stack without it, round by round: req/s lost and CPU per request added.
  const stack = figures.get('stack')!;
  for (const { name } of tracingRows) {
    const runs = figures.get(name)!;
    const rates = runs.map((run, round) => run.rate / stack[round]!.rate);
    const cpu = runs.map((run, round) => run.cpuUs / stack[round]!.cpuUs);
    console.log(
      `${name} against stack: req/s ${median(rates).toFixed(3)} (by round ${rates.map((r) => r.toFixed(2)).join(' ')}), CPU per request ${median(cpu).toFixed(3)} (by round ${cpu.map((r) => r.toFixed(2)).join(' ')})`,
    );
  }
  console.log(`exported: ${JSON.stringify(sink.received())}`);
}
console.log(`written: ${writeResults('stack', { rounds, seconds, processes, figures: Object.fromEntries(figures), exported: sink?.received() })}`);
