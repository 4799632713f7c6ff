// npm run bench -- quick: a short run of every benchmark whose goal is a ratio measured side by side
// (system; ratelimit (a)-(d); the limiter's scale at 2 and 16 instances), one after the other, and
// one table of goal, figure and verdict. About ten minutes; figures are rougher than the full runs'
// (short rounds: three processes a row for system, three rounds for (a) and (b), one for the rest),
// so a miss here asks for the full benchmark, not a revert. Never part of CI.
// Each benchmark runs as `npm run bench -- <name>` would, with short settings; its results file is
// folded into results/quick-<date>.json and removed, so quick runs do not bury the full ones.
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { root, writeResults } from '../support/harness.ts';
import { measureWakeups } from '../support/wakeups.ts';

const resultsDir = join(root, 'bench', 'results');

interface Ran {
  file: string;
  data: Record<string, unknown> & { summary: Record<string, unknown>; table?: Array<Record<string, unknown>> };
}

/** Runs one benchmark with short settings and reads (then removes) the results file it wrote. */
function runBench(name: string, prefix: RegExp, env: Record<string, string>): Ran | undefined {
  const started = Date.now();
  console.log(`\n== ${name} ${JSON.stringify(env)}`);
  try {
    execFileSync(process.execPath, ['--import', 'tsx', join(root, 'bench', 'run.ts'), name], { cwd: root, env: { ...process.env, ...env }, stdio: 'inherit' });
  } catch (error) {
    console.error(`${name} failed: ${error instanceof Error ? error.message : String(error)}`);
    return undefined;
  }
  const file = readdirSync(resultsDir)
    .filter((entry) => prefix.test(entry) && statSync(join(resultsDir, entry)).mtimeMs >= started)
    .sort()
    .at(-1);
  if (!file) {
    return undefined;
  }
  const data = JSON.parse(readFileSync(join(resultsDir, file), 'utf8')) as Ran['data'];
  rmSync(join(resultsDir, file));
  return { file, data };
}

interface Row {
  benchmark: string;
  goal: string;
  figure: string;
  verdict: 'met' | 'missed' | 'report' | 'not run';
}

const rows: Row[] = [];
const check = (benchmark: string, goal: string, value: number | null | undefined, met: (value: number) => boolean, unit = 'x', note = '') =>
  rows.push(
    value === null || value === undefined || Number.isNaN(value)
      ? { benchmark, goal, figure: '-', verdict: 'not run' }
      : { benchmark, goal, figure: `${value}${unit}${note}`, verdict: met(value) ? 'met' : 'missed' },
  );

const load = () =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');
const loadBefore = load();
// What one process waking another costs here: the unit every figure below is paid in (wakeups.ts).
const wakeups = await measureWakeups().catch((error: unknown) => {
  console.error(`wake-up cost not measured: ${error instanceof Error ? error.message : String(error)}`);
  return undefined;
});

// Three processes of each server, their mean: one process a row read its placement's 20% as the row's cost.
const system = runBench('system', /^system-/, { BENCH_SECONDS: '4', BENCH_PROCESSES: '3' });
const systemSummary = system?.data.summary as { readyz_to_bare?: number; ops_system_p99_ms_at_50?: number } | undefined;
// Each service process against the bare processes' mean: the spread a reader weighs the verdict by.
const perProcess = (name: string) =>
  (system?.data.runs as Array<{ name: string; requestsPerSecond: number; perProcess?: number[] }> | undefined)?.find((run) => run.name === name);
const bareRun = perProcess('bare koa route (2 workers)');
const readyzRatios = (perProcess('GET /readyz (2 instances)')?.perProcess ?? []).map((rate) => rate / (bareRun?.requestsPerSecond ?? NaN));
const spread = readyzRatios.length > 1 ? ` (${Math.min(...readyzRatios).toFixed(2)}-${Math.max(...readyzRatios).toFixed(2)} by process)` : '';
check('system', '/readyz >= 0.8x bare Koa', systemSummary?.readyz_to_bare, (value) => value >= 0.8, 'x', spread);
check('system', '/ops/system p99 < 20 ms (50 connections)', systemSummary?.ops_system_p99_ms_at_50, (value) => value < 20, ' ms');

// The ratio goals, (a) and (b), over three rounds (their median): one round read Node 20's flood at
// 0.60x bare Koa where three read 0.89x. The outages, (c) and (d), which count over-admissions, once.
const ratelimit = runBench('ratelimit', /^ratelimit-\d/, { BENCH_SECONDS: '4', BENCH_ROUNDS: '3', BENCH_SCENARIOS: 'a,b' });
const outages = runBench('ratelimit', /^ratelimit-\d/, { BENCH_SECONDS: '4', BENCH_ROUNDS: '1', BENCH_SCENARIOS: 'c,d' });
const limits = ratelimit?.data.summary as Record<string, number | null> | undefined;
const outageLimits = outages?.data.summary as Record<string, number | null> | undefined;
check('ratelimit', '(a) flood >= 0.9x bare Koa', limits?.flood_vs_bare, (value) => value >= 0.9);
check('ratelimit', '(a) flood >= 5x RateLimiterPostgres', limits?.flood_vs_baseline, (value) => value >= 5);
check('ratelimit', '(b) 10,000 clients >= 2.5x RateLimiterPostgres (then 3x)', limits?.many_clients_vs_baseline, (value) => value >= 2.5);
const overAdmissions =
  limits?.over_admissions === undefined || outageLimits?.over_admissions === undefined
    ? undefined
    : (limits.over_admissions ?? 0) + (outageLimits.over_admissions ?? 0);
check('ratelimit', 'over-admissions 0 in (a)-(d)', overAdmissions, (value) => value === 0, '');
// Server CPU per decision in (b): the service against its own limiter on bare Koa (the platform's cost).
const cpuOf = (server: string) =>
  (ratelimit?.data.table as Array<{ server: string; scenario: string; serverCpuMsPer1000: number }> | undefined)?.find(
    (row) => row.server === server && row.scenario.startsWith('(b)'),
  )?.serverCpuMsPer1000;
const serviceCpu = cpuOf('backplane');
const limiterCpu = cpuOf('koa + backplane limiter');
rows.push({
  benchmark: 'ratelimit',
  goal: '(b) server CPU per decision: service / limiter on Koa / RateLimiterPostgres / bare',
  figure: serviceCpu === undefined ? '-' : `${serviceCpu} / ${limiterCpu} / ${cpuOf('koa + RateLimiterPostgres')} / ${cpuOf('bare koa, no limiter')} µs`,
  verdict: serviceCpu === undefined ? 'not run' : 'report',
});

const scale = runBench('ratelimit', /^ratelimit-scale-/, {
  BENCH_SCENARIOS: 'scale',
  BENCH_INSTANCES: '2,16',
  BENCH_SECONDS: '5',
  BENCH_WARMUP_SECONDS: '3',
  BENCH_ROUNDS: '1',
  BENCH_PER_INSTANCE: '0',
  BENCH_POD_SPLITS: '',
});
const scaled = scale?.data.summary as
  { database_cpu_last_vs_first?: number; baseline_vs_backplane_database_cpu?: Record<string, number>; over_admissions?: number } | undefined;
check('scale', 'database CPU per decision, 16 vs 2 instances <= 1.5x', scaled?.database_cpu_last_vs_first, (value) => value <= 1.5);
const fewest = scaled?.baseline_vs_backplane_database_cpu ? Math.min(...Object.values(scaled.baseline_vs_backplane_database_cpu)) : undefined;
check('scale', 'RateLimiterPostgres / service database CPU >= 5x at 2 and 16', fewest, (value) => value >= 5);
check('scale', 'over-admissions 0', scaled?.over_admissions, (value) => value === 0, '');

const loadAfter = load();
const header = ['benchmark', 'goal', 'figure', 'verdict'];
const cells = rows.map((row) => [row.benchmark, row.goal, row.figure, row.verdict]);
const widths = header.map((cell, column) => Math.max(cell.length, ...cells.map((row) => row[column]!.length)));
const line = (row: string[]) => row.map((cell, column) => cell.padEnd(widths[column]!)).join('  ');
console.log(`\nquick benchmarks (load average before: ${loadBefore}; after: ${loadAfter})`);
if (wakeups) {
  console.log(
    `machine: a loopback round trip between two processes ${wakeups.roundTripUs} µs, ${wakeups.cpuUsPerSide} µs of CPU a side` +
      (wakeups.guestHaltPollNs === null ? '' : `; guest halt polling ${wakeups.guestHaltPollNs} ns`),
  );
}
console.log(line(header));
cells.forEach((row) => console.log(line(row)));
const written = writeResults('quick', {
  when: new Date().toISOString(),
  loadAverage: { before: loadBefore, after: loadAfter },
  wakeups,
  rows,
  system: system?.data,
  ratelimit: ratelimit && { summary: ratelimit.data.summary, table: ratelimit.data.table },
  outages: outages && { summary: outages.data.summary, table: outages.data.table },
  scale: scale && { summary: scale.data.summary, table: scale.data.table },
});
console.log(`written: ${written}`);
