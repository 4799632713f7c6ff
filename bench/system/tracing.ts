// bench/system's tracing rows (issue 34): the same loads with no tracing code (a build from before
// it), tracing off (no endpoint), on at 100% and on at 10% sampling, exporting to a loopback sink
// that drops what it gets. Goals (bench/README.md): off within noise of none; 10% at most 3% fewer
// req/s than none. Services take turns round after round, so the machine's load moves them alike.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RunningProcess, root, startService } from '../support/harness.ts';
import { type OtlpSink, startOtlpSink } from '../support/otlpSink.ts';

export interface TracingRow {
  name: string;
  server: RunningProcess;
}

const git = (...args: string[]) => execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();

/**
 * A built checkout without tracing: BENCH_UNTRACED_ROOT, or this repository as it was just before
 * the tracing packages came in, unpacked and built in a temporary folder (the other changes since
 * that commit are in the difference too: point BENCH_UNTRACED_ROOT at a build of this change's base to exclude them).
 */
function untracedBuild(): { root: string; remove(): void } {
  const given = process.env.BENCH_UNTRACED_ROOT;
  if (given) {
    return { root: given, remove: () => undefined };
  }
  const added = git('log', '--diff-filter=A', '--format=%H', '--', 'src/platform/tracing/tracer.ts').split('\n').at(-1)!;
  const folder = mkdtempSync(join(tmpdir(), 'backplane-untraced-'));
  execFileSync('sh', ['-c', `git archive ${added}^ | tar -x -C ${folder}`], { cwd: root, stdio: 'inherit' });
  symlinkSync(join(root, 'node_modules'), join(folder, 'node_modules'));
  execFileSync(process.execPath, [join(folder, 'scripts', 'build.mjs')], { cwd: folder, stdio: 'inherit' });
  if (!existsSync(join(folder, 'dist', 'cli.js'))) {
    throw new Error(`the untraced build in ${folder} has no dist/cli.js`);
  }
  console.log(`tracing rows: "none" is ${added.slice(0, 10)}^, built in ${folder}`);
  return { root: folder, remove: () => rmSync(folder, { recursive: true, force: true }) };
}

/** What no OTEL_* variable of the benchmark's own environment may change: each row sets its own. */
const withoutOtel = (): Record<string, string> =>
  Object.fromEntries(Object.keys(process.env).filter((name) => name.startsWith('OTEL_')).map((name) => [name, '']));

/** The four services of the tracing rows, 2 instances each on one database, and the sink the "on" ones export to. */
export async function startTracingRows(databaseUrl: string, env: Record<string, string>): Promise<{ rows: TracingRow[]; sink: OtlpSink; stop(): Promise<void> }> {
  const sink = await startOtlpSink();
  const clean = { ...env, ...withoutOtel() };
  const on = { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_SERVICE_NAME: 'backplane-bench' };
  const rows: TracingRow[] = [];
  const untraced = untracedBuild();
  const stopAll = async () => {
    await Promise.all(rows.map((row) => row.server.stop()));
    await sink.close();
    untraced.remove();
  };
  try {
    rows.push({ name: 'tracing: none (no tracing code)', server: await startService(databaseUrl, 2, clean, untraced.root) });
    rows.push({ name: 'tracing: off (no endpoint)', server: await startService(databaseUrl, 2, { ...clean, OTEL_SERVICE_NAME: 'backplane-bench' }) });
    rows.push({ name: 'tracing: on, 100%', server: await startService(databaseUrl, 2, { ...clean, ...on, OTEL_TRACES_SAMPLER: 'parentbased_always_on' }) });
    rows.push({ name: 'tracing: on, 10%', server: await startService(databaseUrl, 2, { ...clean, ...on, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' }) });
  } catch (error) {
    await stopAll();
    throw error;
  }
  return { rows, sink, stop: stopAll };
}

/** req/s of each row against none's and off's, median over the rounds of each round's ratio. */
export function tracingRatios(rates: Map<string, number[]>): Record<string, { to_none: number; to_off: number }> {
  // The middle one, or the mean of the middle two: with two rounds the upper one would flatter a row.
  const median = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    const middle = Math.floor(sorted.length / 2);
    return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
  };
  const none = rates.get('tracing: none (no tracing code)') ?? [];
  const off = rates.get('tracing: off (no endpoint)') ?? [];
  const ratio = (of: number[], to: number[]) => Number(median(of.map((rate, round) => rate / to[round]!)).toFixed(3));
  return Object.fromEntries([...rates].map(([name, of]) => [name, { to_none: ratio(of, none), to_off: ratio(of, off) }]));
}
