// BENCH_SCENARIOS=scale npm run bench -- ratelimit: the shared limit at one fixed offered load
// (BENCH_RATE requests/s; 400 by default, what the baseline keeps up with on a loaded 2-core
// machine) spread over 2, 4, 8 and 16 instances (BENCH_INSTANCES), backplane against Koa +
// RateLimiterPostgres on as many workers, one server at a time on a fresh start. Backplane runs
// each count as one pod (one `backplane serve`, whose primary batches every instance's
// decisions), as one pod batching per instance (APP_RATELIMIT_BATCHING=instance, as before
// 2026-11-25), and at the largest count also as 4 and 8 pods (BENCH_POD_SPLITS) with the load
// spread over them, as a load balancer would. 10,000 clients
// under their limit and one flooding client (every 11th request) from the trusted loopback proxy.
// The figure that matters at scale is PostgreSQL's CPU per decision (its process tree's, from
// /proc): batches shrink as the same load spreads over more instances. Goals (issue 16): at 16
// instances within 1.5x of 2 instances, at least 5x below the baseline at every count, no
// over-admission. BENCH_POSTGRES=14 runs it on another major.
// Idle instances cost the database too (heartbeats, job scheduler ticks): before the load, the
// same servers stand idle for as long, and the run reports that idle CPU per instance and second
// beside the CPU per decision net of it (what a decision adds), so a capacity model can keep the
// two terms apart (docs/capacity.md). The gross figure is reported as well.
import { mkdirSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { cpuMsBetween, treeCpu } from './cpu.ts';
import { type ScenarioResult, runScenario } from './load.ts';
import { benchPostgres } from './postgres.ts';
import { type Server, root, settleDatabase, startDatabase, startScript, startService } from './processes.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? '12');
// Long enough for every instance's code to be optimised: at 16 instances each sees only 1/16 of the
// load, and a 3 s warm-up (75 requests each) left them measuring V8's cold paths.
const warmUpSeconds = Number(process.env.BENCH_WARMUP_SECONDS ?? '10');
const rate = Number(process.env.BENCH_RATE ?? '400');
// Rounds of every layout in turn; the table shows each layout's median (a run's database CPU is
// a few hundred ms of CPU, and the machine is shared). BENCH_PER_INSTANCE=0 leaves out the layouts
// batched per instance, to spend the rounds on the goals' rows.
const rounds = Number(process.env.BENCH_ROUNDS ?? '1');
const perInstance = process.env.BENCH_PER_INSTANCE !== '0';
const counts = (process.env.BENCH_INSTANCES ?? '2,4,8,16').split(',').map(Number);
const durable = process.env.BENCH_DURABLE !== '0';
const connections = 100;
const limit = { limit: 60, periodSeconds: 60 };
const proxy = { APP_TRUSTED_PROXIES: '127.0.0.1/32' };

/** 10,000 clients in turn with a flooding one between every ten; `block` keeps each run's addresses its own. */
function clients(target: number, block: number): string[] {
  const flood = `10.${target}.${block}.255`;
  return Array.from({ length: 10_000 }, (_v, index) => `10.${target}.${block + 1 + (index >> 8)}.${index & 255}`).flatMap((client, index) =>
    index % 10 === 9 ? [client, flood] : [client],
  );
}

/** One pod's statements and decisions by source, summed over its workers. */
async function limiterCounters(metricsUrl: string): Promise<Record<string, number>> {
  const text = await (await fetch(metricsUrl)).text();
  const totals: Record<string, number> = {};
  const add = (name: string, line: string) => (totals[name] = (totals[name] ?? 0) + Number(line.split(' ').pop()));
  for (const line of text.split('\n')) {
    if (line.startsWith('backplane_ratelimit_statement_keys_count')) {
      add('statements', line);
    } else if (line.startsWith('backplane_ratelimit_statement_keys_sum')) {
      add('keys', line);
    } else if (line.startsWith('backplane_ratelimit_decisions_total')) {
      add(`decided_${/source="(\w+)"/.exec(line)?.[1]}`, line);
    }
  }
  return totals;
}

/** How one run's instances are laid out: pods of `perPod` instances, each pod one `backplane serve` (one process group). */
interface Layout {
  server: string;
  instances: number;
  pods: number;
  env?: Record<string, string>;
  baseline?: boolean;
}

// Each instance count as one pod (the primary batches for all of them), as one pod batching per
// instance (before 2026-11-25), and the baseline; the largest count also split into several pods.
const podSplits = (process.env.BENCH_POD_SPLITS ?? '4,8').split(',').filter(Boolean).map(Number);
const largest = Math.max(...counts);
const layouts: Layout[] = counts.flatMap((count) => [
  { server: 'backplane', instances: count, pods: 1 },
  ...(count === largest
    ? podSplits
        .filter((pods) => pods > 1 && count % pods === 0)
        .map((pods) => ({ server: `backplane, ${pods} pods x ${count / pods}`, instances: count, pods }))
    : []),
  ...(perInstance ? [{ server: 'backplane, batched per instance', instances: count, pods: 1, env: { APP_RATELIMIT_BATCHING: 'instance' } }] : []),
  { server: 'koa + RateLimiterPostgres', instances: count, pods: 1, baseline: true },
]);

/** The layout's servers as one: pods behind a load balancer, here autocannon spreading over their ports. */
async function startLayout(layout: Layout, databaseUrl: string): Promise<Server & { urls: string[]; pids: number[]; metricsUrls: string[] }> {
  if (layout.baseline) {
    const server = await startScript(join(root, 'bench', 'ratelimit', 'baselineServer.ts'), {
      BENCH_WORKERS: String(layout.instances),
      DATABASE_URL: databaseUrl,
      ...proxy,
    });
    return { ...server, urls: [server.url], pids: [server.pid], metricsUrls: [] };
  }
  const pods: Server[] = [];
  try {
    for (let pod = 0; pod < layout.pods; pod += 1) {
      pods.push(
        await startService({
          DATABASE_URL: databaseUrl,
          APP_INSTANCES: String(layout.instances / layout.pods),
          APP_JOB_WORKERS: '0',
          LOG_LEVEL: 'warn',
          ...proxy,
          ...layout.env,
        }),
      );
    }
  } catch (error) {
    await Promise.all(pods.map((pod) => pod.stop()));
    throw error;
  }
  return {
    url: pods[0]!.url,
    pid: pods[0]!.pid,
    urls: pods.map((pod) => pod.url),
    pids: pods.map((pod) => pod.pid),
    metricsUrls: pods.map((pod) => pod.metricsUrl!),
    stop: async () => {
      await Promise.all(pods.map((pod) => pod.stop()));
    },
  };
}

/** The service's statements and decisions by source, summed over its pods and workers. */
async function layoutCounters(metricsUrls: string[]): Promise<Record<string, number>> {
  const totals: Record<string, number> = {};
  for (const url of metricsUrls) {
    for (const [key, value] of Object.entries(await limiterCounters(url))) {
      totals[key] = (totals[key] ?? 0) + value;
    }
  }
  return totals;
}

const postgres = benchPostgres();
const database = await startDatabase(durable, postgres.prefix);
const runs: Array<ScenarioResult & { round: number; instances: number; pods: number; databaseIdleMsPerSecond: number }> = [];

/** PostgreSQL's CPU milliseconds per second while the servers stand idle for `seconds`. */
async function idleDatabaseCpu(databasePid: number): Promise<number> {
  const before = treeCpu([databasePid]);
  const started = performance.now();
  await sleep(seconds * 1000);
  return cpuMsBetween(before, treeCpu([databasePid]), databasePid) / ((performance.now() - started) / 1000);
}
const plan = Array.from({ length: rounds }, (_v, round) => layouts.map((layout) => ({ round, layout }))).flat();
try {
  for (const [index, { round, layout }] of plan.entries()) {
    const server = await startLayout(layout, database.url);
    // Every run its own clients (10.<run>.x.x): buckets of earlier runs stay in the shared database.
    const target = index + 1;
    try {
      const scenario = (title: string, block: number, duration: number) => ({
        server: layout.server,
        scenario: title,
        url: server.urls,
        clients: clients(target, block),
        seconds: duration,
        connections,
        rate,
        limit,
        pids: { server: server.pids, database: database.pid },
      });
      await runScenario(scenario('warm-up', 100, warmUpSeconds));
      await settleDatabase(database.url);
      const databaseIdleMsPerSecond = await idleDatabaseCpu(database.pid);
      const before = server.metricsUrls.length ? await layoutCounters(server.metricsUrls) : undefined;
      const result = await runScenario(scenario(`${rate}/s over ${layout.instances} instances in ${layout.pods} pod(s)`, 0, seconds));
      if (before) {
        const after = await layoutCounters(server.metricsUrls);
        result.decisions = Object.fromEntries(Object.entries(after).map(([key, value]) => [key, value - (before[key] ?? 0)]));
      }
      runs.push({ ...result, round, instances: layout.instances, pods: layout.pods, databaseIdleMsPerSecond });
      console.log(
        `${layout.server}, ${layout.instances} instances: ${result.decisionsPerSecond}/s, database ${result.cpuMsPer1000.database} us CPU per decision, over-admitted ${result.overAdmissions}`,
      );
    } finally {
      await server.stop();
    }
  }
} finally {
  await database.stop();
}

const perRun = runs.map((r) => ({
  server: r.server,
  instances: r.instances,
  pods: r.pods,
  decisionsPerSecond: r.decisionsPerSecond,
  p99Ms: r.p99Ms,
  // ms per 1,000 decisions is µs per decision.
  databaseCpuUsPerDecision: r.cpuMsPer1000.database,
  // What the idle servers cost over the run's length, taken out: what deciding adds.
  databaseCpuUsPerDecisionNet: Number(Math.max(0, r.cpuMsPer1000.database - (r.databaseIdleMsPerSecond * r.seconds * 1000) / r.requests).toFixed(1)),
  databaseIdleUsPerInstanceSecond: Number(((r.databaseIdleMsPerSecond * 1000) / r.instances).toFixed(0)),
  serverCpuUsPerDecision: r.cpuMsPer1000.server,
  keysPerStatement: r.decisions?.statements ? Number((r.decisions.keys! / r.decisions.statements).toFixed(2)) : null,
  admitted: r.admitted,
  refused: r.refused,
  overAdmissions: r.overAdmissions,
  errors: r.errors,
}));
type Row = (typeof perRun)[number];
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle]! : Number(((sorted[middle - 1]! + sorted[middle]!) / 2).toFixed(1));
};
// One row per layout: medians over its rounds, counts of admissions and errors summed.
const table: Row[] = layouts.map((layout) => {
  const rows = perRun.filter((r) => r.server === layout.server && r.instances === layout.instances);
  const mid = (pick: (r: Row) => number | null) => median(rows.map(pick).filter((value): value is number => value !== null));
  const sum = (pick: (r: Row) => number | null) => rows.reduce((total, r) => total + (pick(r) ?? 0), 0);
  return {
    server: layout.server,
    instances: layout.instances,
    pods: layout.pods,
    decisionsPerSecond: mid((r) => r.decisionsPerSecond),
    p99Ms: mid((r) => r.p99Ms),
    databaseCpuUsPerDecision: mid((r) => r.databaseCpuUsPerDecision),
    databaseCpuUsPerDecisionNet: mid((r) => r.databaseCpuUsPerDecisionNet),
    databaseIdleUsPerInstanceSecond: mid((r) => r.databaseIdleUsPerInstanceSecond),
    serverCpuUsPerDecision: mid((r) => r.serverCpuUsPerDecision),
    keysPerStatement: layout.baseline ? null : mid((r) => r.keysPerStatement),
    admitted: sum((r) => r.admitted),
    refused: sum((r) => r.refused),
    overAdmissions: sum((r) => r.overAdmissions),
    errors: sum((r) => r.errors),
  };
});
const header = [
  'server',
  'instances',
  'pods',
  'decisions/s',
  'p99 ms',
  'db us/decision',
  'net of idle',
  'db idle us/instance/s',
  'server us/decision',
  'keys/statement',
  'over-admitted',
  'errors',
];
const cells = table.map((r) => [
  r.server,
  String(r.instances),
  String(r.pods),
  String(r.decisionsPerSecond),
  String(r.p99Ms),
  String(r.databaseCpuUsPerDecision),
  String(r.databaseCpuUsPerDecisionNet),
  String(r.databaseIdleUsPerInstanceSecond),
  String(r.serverCpuUsPerDecision),
  String(r.keysPerStatement ?? '-'),
  String(r.overAdmissions),
  String(r.errors),
]);
const widths = header.map((cell, column) => Math.max(cell.length, ...cells.map((row) => row[column]!.length)));
for (const row of [header, ...cells]) {
  console.log(row.map((cell, column) => cell.padEnd(widths[column]!)).join('  '));
}
const of = (server: string, count: number, net = false) => {
  const row = table.find((r) => r.server === server && r.instances === count);
  return net ? row?.databaseCpuUsPerDecisionNet : row?.databaseCpuUsPerDecision;
};
const lastVsFirst = (net: boolean, server = 'backplane') => {
  const first = of(server, counts[0]!, net);
  const last = of(server, counts.at(-1)!, net);
  return first && last ? Number((last / first).toFixed(2)) : null;
};
const baselineVsBackplane = (net: boolean) =>
  Object.fromEntries(
    counts.map((count) => [count, Number(((of('koa + RateLimiterPostgres', count, net) ?? 0) / Math.max(0.1, of('backplane', count, net) ?? 0)).toFixed(1))]),
  );
// The largest count split into pods, against the smallest count in one pod: what batching per pod leaves.
const splitVsFirst = (net: boolean) =>
  Object.fromEntries(
    table
      .filter((r) => r.pods > 1)
      .map((r) => [
        r.server,
        Number(((net ? r.databaseCpuUsPerDecisionNet : r.databaseCpuUsPerDecision) / Math.max(0.1, of('backplane', counts[0]!, net) ?? 0)).toFixed(2)),
      ]),
  );
// The same ratio within each round, so the spread behind the median shows.
const byRound = (server: string, count: number, round: number) => runs.findIndex((r) => r.server === server && r.instances === count && r.round === round);
const roundRatios = Array.from({ length: rounds }, (_v, round) => {
  const first = perRun[byRound('backplane', counts[0]!, round)]?.databaseCpuUsPerDecision;
  const last = perRun[byRound('backplane', counts.at(-1)!, round)]?.databaseCpuUsPerDecision;
  return first && last ? Number((last / first).toFixed(2)) : null;
});
const summary = {
  database_cpu_last_vs_first: lastVsFirst(false),
  database_cpu_last_vs_first_by_round: roundRatios,
  database_cpu_net_last_vs_first: lastVsFirst(true),
  database_cpu_last_vs_first_batched_per_instance: lastVsFirst(false, 'backplane, batched per instance'),
  split_pods_database_cpu_vs_first: splitVsFirst(false),
  split_pods_database_cpu_net_vs_first: splitVsFirst(true),
  baseline_vs_backplane_database_cpu: baselineVsBackplane(false),
  baseline_vs_backplane_database_cpu_net: baselineVsBackplane(true),
  over_admissions: table.filter((r) => r.server.startsWith('backplane')).reduce((sum, r) => sum + (r.overAdmissions ?? 0), 0),
  goals: { database_cpu_last_vs_first: '<= 1.5', baseline_vs_backplane_database_cpu: '>= 5 at every count', over_admissions: '0' },
};
console.log(summary);
mkdirSync(join(root, 'bench', 'results'), { recursive: true });
const file = join(root, 'bench', 'results', `ratelimit-scale-pg${postgres.major}-${new Date().toISOString().slice(0, 19).replace(/:/g, '')}.json`);
const machine = { cpus: availableParallelism(), node: process.version };
writeFileSync(
  file,
  JSON.stringify(
    {
      when: new Date().toISOString(),
      machine,
      postgres: postgres.major,
      database: durable ? 'durable' : 'fsync off',
      seconds,
      warmUpSeconds,
      rounds,
      rate,
      connections,
      limit,
      table,
      summary,
      perRun,
      runs,
    },
    null,
    2,
  ) + '\n',
);
console.log(`written: ${file}`);
