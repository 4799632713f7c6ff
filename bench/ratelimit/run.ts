// bench/ratelimit: the shared per-address limit under load, side by side in one run with
// Koa + rate-limiter-flexible's RateLimiterPostgres (same database, limit and proxy handling) and a
// bare Koa route with no limiter, each on 4 clustered workers, driven by autocannon through a
// trusted loopback proxy (X-Forwarded-For). Scenarios: (a) one client flooding; (b) 10,000 clients
// each under its limit; (c) the flood while PostgreSQL is frozen (SIGSTOP) for 5 s in its middle;
// (d) the flood beside one busy process per core. Servers take turns, round after round, so load
// from elsewhere on the machine falls on all of them alike; the table shows each one's median. The
// baseline runs twice for (a) and (b): on 4 workers like the others (the fair comparison; the goals
// use it), and as one process; (c) and (d) compare the service with the 4-worker baseline only.
// Goals: over-admissions 0 in every scenario; (b) >= 3x the baseline; (a) >= 5x the baseline and
// >= 0.8x the bare route.
import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { type Scenario, type ScenarioResult, runScenario } from './load.ts';
import { benchPostgres } from './postgres.ts';
import { type Server, pauseTree, root, settleDatabase, startDatabase, startScript, startService, withBusyCores } from './processes.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? '10');
const rounds = Math.min(5, Number(process.env.BENCH_ROUNDS ?? '3'));
const connections = Number(process.env.BENCH_CONNECTIONS ?? '100');
const instances = 4;
const limit = { limit: 60, periodSeconds: 60 };
const proxy = { APP_TRUSTED_PROXIES: '127.0.0.1/32' };
// Durable by default, as `backplane serve` runs its database; BENCH_DURABLE=0 turns fsync and
// synchronous commit off, as the test suite does.
const durable = process.env.BENCH_DURABLE !== '0';
// BENCH_SCENARIOS=b runs only (b), for quicker comparisons; the summary then covers what ran.
const scenarios = new Set((process.env.BENCH_SCENARIOS ?? 'a,b,c,d').split(','));
// Only (c) and (d): the servers they compare, nothing else, so a quick outage run loads the machine less.
const throughputScenarios = scenarios.has('a') || scenarios.has('b');
const pauseMs = 5_000;
// (c) needs the pause and a stretch of flood on each side of it.
const outageSeconds = Math.max(seconds, 11);

// Each target, scenario and round gets its own addresses, so no run starts with spent buckets.
const clientsOf = (target: number, block: number, count: number) =>
  Array.from({ length: count }, (_v, index) => `10.${target}.${block + (index >> 8)}.${index & 255}`);

interface Target {
  name: string;
  index: number;
  server: Server;
  path?: string;
  limited: boolean;
}

async function metricLines(server: Server): Promise<string[]> {
  if (!server.metricsUrl) {
    return [];
  }
  const text = await (await fetch(server.metricsUrl)).text();
  return text.split('\n').filter((line) => line.startsWith('backplane_ratelimit_'));
}

/** Series name -> what the bench calls it in its results. */
function metricNames(line: string): string[] {
  const name = metricName(line);
  const admitted = line.startsWith('backplane_ratelimit_decisions_total') && line.includes('allowed="true"');
  return name === undefined ? [] : admitted ? [name, `admitted_${/source="(\w+)"/.exec(line)?.[1]}`] : [name];
}

function metricName(line: string): string | undefined {
  if (line.startsWith('backplane_ratelimit_fallbacks_total')) {
    return `fallback_${/reason="(\w+)"/.exec(line)?.[1]}`;
  }
  if (line.startsWith('backplane_ratelimit_decisions_total')) {
    return `decided_${/source="(\w+)"/.exec(line)?.[1]}`;
  }
  if (line.startsWith('backplane_ratelimit_statement_keys_count')) {
    return 'statements';
  }
  return undefined;
}

/** Decision sources, fallbacks and statements sent, summed over the cluster's workers. */
function summariseMetrics(lines: string[]): Record<string, number> {
  const totals: Record<string, number> = {};
  for (const line of lines) {
    for (const name of metricNames(line)) {
      totals[name] = (totals[name] ?? 0) + Number(line.split(' ').pop());
    }
  }
  return totals;
}

async function run(
  target: Target,
  scenario: string,
  clients: string[],
  duration: number,
  databasePid: number,
  alongside?: () => Promise<void>,
): Promise<ScenarioResult> {
  const options: Scenario = {
    alongside,
    server: target.name,
    scenario,
    url: target.server.url,
    path: target.path,
    clients,
    seconds: duration,
    connections,
    limit: target.limited ? limit : null,
    pids: { server: target.server.pid, database: databasePid },
  };
  await settleDatabase(databaseUrl);
  const before = summariseMetrics(await metricLines(target.server));
  const result = await runScenario(options);
  const lines = await metricLines(target.server);
  const after = summariseMetrics(lines);
  if (target.server.metricsUrl) {
    result.decisions = Object.fromEntries(Object.entries(after).map(([key, value]) => [key, value - (before[key] ?? 0)]));
    // What each worker would divide a limit by when deciding alone (the fewest any of them counted).
    const live = lines.filter((line) => line.startsWith('backplane_ratelimit_live_instances')).map((line) => Number(line.split(' ').pop()));
    result.decisions.live_instances_fewest = Math.min(...live);
  }
  return result;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

function summarise(runs: ScenarioResult[]) {
  const groups = new Map<string, ScenarioResult[]>();
  for (const result of runs) {
    const key = `${result.server}|${result.scenario}`;
    groups.set(key, [...(groups.get(key) ?? []), result]);
  }
  return [...groups.values()].map((group) => ({
    server: group[0]!.server,
    scenario: group[0]!.scenario,
    rounds: group.length,
    decisionsPerSecond: median(group.map((r) => r.decisionsPerSecond)),
    p99Ms: median(group.map((r) => r.p99Ms)),
    admitted: group.reduce((sum, r) => sum + r.admitted, 0),
    refused: group.reduce((sum, r) => sum + r.refused, 0),
    overAdmissions: group[0]!.overAdmissions === null ? null : group.reduce((sum, r) => sum + r.overAdmissions!, 0),
    errors: group.reduce((sum, r) => sum + r.errors, 0),
    serverCpuMsPer1000: median(group.map((r) => r.cpuMsPer1000.server)),
    databaseCpuMsPer1000: median(group.map((r) => r.cpuMsPer1000.database)),
  }));
}

function printTable(rows: ReturnType<typeof summarise>): void {
  const header = ['server', 'scenario', 'decisions/s', 'p99 ms', 'admitted', 'refused', 'over-admitted', 'errors', 'cpu ms/1k server', 'db'];
  const cells = rows.map((r) => [
    r.server,
    r.scenario,
    String(r.decisionsPerSecond),
    String(r.p99Ms),
    String(r.admitted),
    String(r.refused),
    r.overAdmissions === null ? '-' : String(r.overAdmissions),
    String(r.errors),
    String(r.serverCpuMsPer1000),
    String(r.databaseCpuMsPer1000),
  ]);
  const widths = header.map((cell, column) => Math.max(cell.length, ...cells.map((row) => row[column]!.length)));
  const line = (row: string[]) => row.map((cell, column) => cell.padEnd(widths[column]!)).join('  ');
  console.log(line(header));
  cells.forEach((row) => console.log(line(row)));
}

const postgres = benchPostgres();
const database = await startDatabase(durable, postgres.prefix);
const databaseUrl = database.url;
const started: Server[] = [];
const runs: ScenarioResult[] = [];
const startScriptServer = async (file: string, env: Record<string, string>) => {
  const server = await startScript(join(root, 'bench', 'ratelimit', file), env);
  started.push(server);
  return server;
};
try {
  const baseline = await startScriptServer('baselineServer.ts', { BENCH_WORKERS: String(instances), DATABASE_URL: database.url, ...proxy });
  // Access logs off: the baseline and the bare route log nothing either.
  const service = await startService({ DATABASE_URL: database.url, APP_INSTANCES: String(instances), LOG_LEVEL: 'warn', ...proxy });
  started.push(service);
  const targets: Target[] = [
    { name: 'koa + RateLimiterPostgres', index: 2, server: baseline, limited: true },
    { name: 'backplane', index: 1, server: service, limited: true },
  ];
  if (throughputScenarios) {
    const bare = await startScriptServer('bareServer.ts', { BENCH_WORKERS: String(instances) });
    // The baseline as the issue measured it for reference: one process.
    const baselineAlone = await startScriptServer('baselineServer.ts', { BENCH_WORKERS: '1', DATABASE_URL: database.url, ...proxy });
    const limiterAlone = await startScriptServer('limiterServer.ts', { BENCH_WORKERS: String(instances), DATABASE_URL: database.url, ...proxy });
    // The service as it decided before its primary batched for the pod (APP_RATELIMIT_BATCHING=instance).
    const perInstance = await startService({
      DATABASE_URL: database.url,
      APP_INSTANCES: String(instances),
      LOG_LEVEL: 'warn',
      APP_RATELIMIT_BATCHING: 'instance',
      ...proxy,
    });
    started.push(perInstance);
    // In the order of earlier runs' tables.
    targets.unshift({ name: 'bare koa, no limiter', index: 3, server: bare, limited: false });
    targets.splice(2, 0, { name: 'koa + RateLimiterPostgres, 1 process', index: 5, server: baselineAlone, limited: true });
    targets.splice(4, 0, { name: 'backplane, batched per instance', index: 7, server: perInstance, limited: true });
    targets.push(
      // The service's limiter alone on bare Koa: what the decision costs without the platform around it.
      { name: 'koa + backplane limiter', index: 6, server: limiterAlone, limited: true },
      // The same stack on a path the limit does not cover: what the platform costs without a decision.
      { name: 'backplane, path not limited', index: 4, server: service, path: '/ops/none', limited: false },
    );
  }
  const outageTargets = targets.filter((target) => target.name === 'backplane' || target.name === 'koa + RateLimiterPostgres');
  for (const target of targets) {
    await run(target, 'warm-up', clientsOf(target.index, 200, 2_000), 3, database.pid);
  }
  for (let round = 0; round < rounds; round += 1) {
    for (const target of scenarios.has('a') ? targets : []) {
      runs.push(await run(target, '(a) one client flooding', clientsOf(target.index, 250 + round, 1), seconds, database.pid));
    }
    for (const target of scenarios.has('b') ? targets.filter((t) => t.limited || t.path === undefined) : []) {
      runs.push(await run(target, '(b) 10,000 clients under the limit', clientsOf(target.index, 40 * round, 10_000), seconds, database.pid));
    }
    for (const target of scenarios.has('c') ? outageTargets : []) {
      // Frozen from the middle of the flood for 5 s, answering neither queries nor connections.
      const pause = async () => {
        await new Promise((resolve) => setTimeout(resolve, (outageSeconds * 1000 - pauseMs) / 2));
        await pauseTree(database.pid, pauseMs);
      };
      const scenario = '(c) one client flooding, database frozen 5 s';
      runs.push(await run(target, scenario, clientsOf(target.index, 220 + round, 1), outageSeconds, database.pid, pause));
    }
    for (const target of scenarios.has('d') ? outageTargets : []) {
      const scenario = '(d) one client flooding beside a busy process per core';
      runs.push(await withBusyCores(() => run(target, scenario, clientsOf(target.index, 230 + round, 1), seconds, database.pid)));
    }
  }
} finally {
  for (const server of started) {
    await server.stop();
  }
  await database.stop();
}

const table = summarise(runs);
printTable(table);
const find = (server: string, scenario: string) => table.find((r) => r.server === server && r.scenario.startsWith(scenario));
const ratio = (a?: { decisionsPerSecond: number }, b?: { decisionsPerSecond: number }) =>
  a && b ? Number((a.decisionsPerSecond / b.decisionsPerSecond).toFixed(2)) : null;
const summary = {
  flood_vs_baseline: ratio(find('backplane', '(a)'), find('koa + RateLimiterPostgres', '(a)')),
  flood_vs_bare: ratio(find('backplane', '(a)'), find('bare koa, no limiter', '(a)')),
  flood_vs_same_stack_unlimited: ratio(find('backplane', '(a)'), find('backplane, path not limited', '(a)')),
  many_clients_vs_baseline: ratio(find('backplane', '(b)'), find('koa + RateLimiterPostgres', '(b)')),
  many_clients_vs_bare: ratio(find('backplane', '(b)'), find('bare koa, no limiter', '(b)')),
  flood_vs_baseline_one_process: ratio(find('backplane', '(a)'), find('koa + RateLimiterPostgres, 1 process', '(a)')),
  many_clients_limiter_alone_vs_baseline: ratio(find('koa + backplane limiter', '(b)'), find('koa + RateLimiterPostgres', '(b)')),
  many_clients_vs_baseline_one_process: ratio(find('backplane', '(b)'), find('koa + RateLimiterPostgres, 1 process', '(b)')),
  over_admissions: ['(a)', '(b)', '(c)', '(d)'].reduce((sum, scenario) => sum + (find('backplane', scenario)?.overAdmissions ?? 0), 0),
  // Reported as they are: the baseline's over-admissions when the database freezes or the cores are busy.
  baseline_over_admissions_frozen_database: find('koa + RateLimiterPostgres', '(c)')?.overAdmissions ?? null,
  baseline_over_admissions_busy_cores: find('koa + RateLimiterPostgres', '(d)')?.overAdmissions ?? null,
  goals: { flood_vs_baseline: '>= 5', flood_vs_bare: '>= 0.9', many_clients_vs_baseline: '>= 2.5 (then 3)', over_admissions: '0 in every scenario' },
};
console.log(summary);
for (const result of runs.filter((r) => r.decisions)) {
  console.log(`backplane ${result.scenario}: decisions by source`, result.decisions);
}
mkdirSync(join(root, 'bench', 'results'), { recursive: true });
const file = join(
  root,
  'bench',
  'results',
  `ratelimit-${postgres.major === '18' ? '' : `pg${postgres.major}-`}${durable ? '' : 'fsync-off-'}${new Date().toISOString().slice(0, 19).replace(/:/g, '')}.json`,
);
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
      rounds,
      connections,
      instances,
      limit,
      table,
      summary,
      runs,
    },
    null,
    2,
  ) + '\n',
);
console.log(`written: ${file}`);
