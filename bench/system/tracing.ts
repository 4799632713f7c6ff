// bench/system's tracing rows (issue 34): the same loads with no tracing code (this commit with
// tracing taken out), tracing off (no endpoint), on at 100% and on at 10% sampling, exporting to a loopback sink
// that drops what it gets. Goals (bench/README.md): off within noise of none; 10% at most 3% fewer
// req/s than none. Services take turns round after round, so the machine's load moves them alike.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
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
 * The edits that take tracing out of this commit's request path and start-up: no span hooks in the
 * request frame, no mixin in the logger, no set-up in the instance or the pod's primary. What
 * stays loaded is @opentelemetry/api's no-op (used by jobs, the limiter's batches and tasks, none of
 * which the measured routes run); the SDK is not loaded with tracing off either. Each edit must
 * match exactly: a change to these lines fails the bench rather than measuring something else.
 */
const UNTRACED_EDITS: Array<[file: string, from: string, to: string]> = [
  [
    'src/platform/http/requestFrame.ts',
    "import { type RequestTracing, type ServerSpan, traceRequests } from '../tracing/serverSpan.ts';",
    'type ServerSpan = { traceId: string | undefined; end(route: string, status: number, clientAddress: string): void };\ntype RequestTracing = object;',
  ],
  [
    'src/platform/http/requestFrame.ts',
    'const tracing = traceRequests(handleRequest, options.tracing);\n  const middleware: Middleware = tracing?.middleware ?? handleRequest;',
    'const tracing = undefined as { callerTraceId(request: IncomingMessage): string | undefined } | undefined;\n  const middleware: Middleware = handleRequest;',
  ],
  [
    'src/platform/logging/logger.ts',
    "import { traceLogOptions } from '../tracing/logFields.ts';\nimport { tracingConfigured } from '../tracing/setup.ts';\n",
    '',
  ],
  ['src/platform/logging/logger.ts', '...(tracingConfigured() ? traceLogOptions : {}),', ''],
  [
    'src/app/instance.ts',
    "import { flushTracing, startTracing } from '../platform/tracing/setup.ts';",
    'const startTracing = async (_identity: unknown) => undefined;\nconst flushTracing = async () => undefined;',
  ],
  [
    'src/app/cluster.ts',
    "import { flushTracing, startTracing } from '../platform/tracing/setup.ts';",
    'const startTracing = async (_identity: unknown) => undefined;\nconst flushTracing = async () => undefined;',
  ],
];

/**
 * A built checkout without tracing: BENCH_UNTRACED_ROOT, or this commit (HEAD) with UNTRACED_EDITS
 * applied, unpacked and built in a temporary folder, so that "none" and "off" differ by tracing alone.
 */
function untracedBuild(): { root: string; remove(): void } {
  const given = process.env.BENCH_UNTRACED_ROOT;
  if (given) {
    return { root: given, remove: () => undefined };
  }
  const folder = mkdtempSync(join(tmpdir(), 'backplane-untraced-'));
  execFileSync('sh', ['-c', `git archive HEAD | tar -x -C ${folder}`], { cwd: root, stdio: 'inherit' });
  for (const [file, from, to] of UNTRACED_EDITS) {
    const text = readFileSync(join(folder, file), 'utf8');
    if (!text.includes(from)) {
      rmSync(folder, { recursive: true, force: true });
      throw new Error(`tracing rows: ${file} no longer has ${JSON.stringify(from)}; update UNTRACED_EDITS in bench/system/tracing.ts`);
    }
    writeFileSync(join(folder, file), text.replace(from, to));
  }
  symlinkSync(join(root, 'node_modules'), join(folder, 'node_modules'));
  execFileSync(process.execPath, [join(folder, 'scripts', 'build.mjs')], { cwd: folder, stdio: 'inherit' });
  if (!existsSync(join(folder, 'dist', 'cli.js'))) {
    throw new Error(`the untraced build in ${folder} has no dist/cli.js`);
  }
  console.log(`tracing rows: "none" is ${git('rev-parse', '--short', 'HEAD')} without tracing, built in ${folder}`);
  return { root: folder, remove: () => rmSync(folder, { recursive: true, force: true }) };
}

/** What no OTEL_* variable of the benchmark's own environment may change: each row sets its own. */
const withoutOtel = (): Record<string, string> =>
  Object.fromEntries(
    Object.keys(process.env)
      .filter((name) => name.startsWith('OTEL_'))
      .map((name) => [name, '']),
  );

/** The four services of the tracing rows, 2 instances each on one database, and the sink the "on" ones export to. */
export async function startTracingRows(
  databaseUrl: string,
  env: Record<string, string>,
): Promise<{ rows: TracingRow[]; sink: OtlpSink; stop(): Promise<void> }> {
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
    rows.push({
      name: 'tracing: on, 10%',
      server: await startService(databaseUrl, 2, { ...clean, ...on, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' }),
    });
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
