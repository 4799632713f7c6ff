// BENCH_SCENARIOS=scale npm run bench -- ratelimit: the shared limit at one fixed offered load
// (BENCH_RATE requests/s; 400 by default, what the baseline keeps up with on a loaded 2-core
// machine) spread over 2, 4, 8 and 16 instances (BENCH_INSTANCES), backplane against Koa +
// RateLimiterPostgres on as many workers, one server at a time on a fresh start. 10,000 clients
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
import { cpuMsBetween, treeTicks } from './cpu.ts';
import { type ScenarioResult, runScenario } from './load.ts';
import { benchPostgres } from './postgres.ts';
import { type Server, root, startDatabase, startScript, startService } from './processes.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? '8');
const rate = Number(process.env.BENCH_RATE ?? '400');
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

/** The service's statements and decisions by source, summed over its workers. */
async function limiterCounters(server: Server): Promise<Record<string, number>> {
  const text = await (await fetch(server.metricsUrl!)).text();
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

const postgres = benchPostgres();
const database = await startDatabase(durable, postgres.prefix);
const runs: Array<ScenarioResult & { instances: number; databaseIdleMsPerSecond: number }> = [];

/** PostgreSQL's CPU milliseconds per second while the servers stand idle for `seconds`. */
async function idleDatabaseCpu(databasePid: number): Promise<number> {
  const before = treeTicks([databasePid]);
  const started = performance.now();
  await sleep(seconds * 1000);
  return cpuMsBetween(before, treeTicks([databasePid]), databasePid) / ((performance.now() - started) / 1000);
}
try {
  for (const [position, count] of counts.entries()) {
    for (const [target, name] of [
      [1, 'backplane'],
      [2, 'koa + RateLimiterPostgres'],
    ] as const) {
      const server =
        name === 'backplane'
          ? await startService({ DATABASE_URL: database.url, APP_INSTANCES: String(count), APP_JOB_WORKERS: '0', LOG_LEVEL: 'warn', ...proxy })
          : await startScript(join(root, 'bench', 'ratelimit', 'baselineServer.ts'), { BENCH_WORKERS: String(count), DATABASE_URL: database.url, ...proxy });
      try {
        const scenario = (title: string, block: number, duration: number) => ({
          server: name,
          scenario: title,
          url: server.url,
          clients: clients(target, block),
          seconds: duration,
          connections,
          rate,
          limit,
          pids: { server: server.pid, database: database.pid },
        });
        await runScenario(scenario('warm-up', 100 + position * 50, 3));
        const databaseIdleMsPerSecond = await idleDatabaseCpu(database.pid);
        const before = server.metricsUrl ? await limiterCounters(server) : undefined;
        const result = await runScenario(scenario(`${rate}/s over ${count} instances`, position * 50, seconds));
        if (before) {
          const after = await limiterCounters(server);
          result.decisions = Object.fromEntries(Object.entries(after).map(([key, value]) => [key, value - (before[key] ?? 0)]));
        }
        runs.push({ ...result, instances: count, databaseIdleMsPerSecond });
        console.log(`${name}, ${count} instances: ${result.decisionsPerSecond}/s, database ${result.cpuMsPer1000.database} us CPU per decision, over-admitted ${result.overAdmissions}`);
      } finally {
        await server.stop();
      }
    }
  }
} finally {
  await database.stop();
}

const table = runs.map((r) => ({
  server: r.server,
  instances: r.instances,
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
const header = ['server', 'instances', 'decisions/s', 'p99 ms', 'db us/decision', 'net of idle', 'db idle us/instance/s', 'server us/decision', 'keys/statement', 'over-admitted', 'errors'];
const cells = table.map((r) => [r.server, String(r.instances), String(r.decisionsPerSecond), String(r.p99Ms), String(r.databaseCpuUsPerDecision), String(r.databaseCpuUsPerDecisionNet), String(r.databaseIdleUsPerInstanceSecond), String(r.serverCpuUsPerDecision), String(r.keysPerStatement ?? '-'), String(r.overAdmissions), String(r.errors)]);
const widths = header.map((cell, column) => Math.max(cell.length, ...cells.map((row) => row[column]!.length)));
for (const row of [header, ...cells]) {
  console.log(row.map((cell, column) => cell.padEnd(widths[column]!)).join('  '));
}
const of = (server: string, count: number, net = false) => {
  const row = table.find((r) => r.server === server && r.instances === count);
  return net ? row?.databaseCpuUsPerDecisionNet : row?.databaseCpuUsPerDecision;
};
const lastVsFirst = (net: boolean) => {
  const first = of('backplane', counts[0]!, net);
  const last = of('backplane', counts.at(-1)!, net);
  return first && last ? Number((last / first).toFixed(2)) : null;
};
const baselineVsBackplane = (net: boolean) =>
  Object.fromEntries(counts.map((count) => [count, Number(((of('koa + RateLimiterPostgres', count, net) ?? 0) / Math.max(0.1, of('backplane', count, net) ?? 0)).toFixed(1))]));
const summary = {
  database_cpu_last_vs_first: lastVsFirst(false),
  database_cpu_net_last_vs_first: lastVsFirst(true),
  baseline_vs_backplane_database_cpu: baselineVsBackplane(false),
  baseline_vs_backplane_database_cpu_net: baselineVsBackplane(true),
  over_admissions: table.filter((r) => r.server === 'backplane').reduce((sum, r) => sum + (r.overAdmissions ?? 0), 0),
  goals: { database_cpu_last_vs_first: '<= 1.5', baseline_vs_backplane_database_cpu: '>= 5 at every count', over_admissions: '0' },
};
console.log(summary);
mkdirSync(join(root, 'bench', 'results'), { recursive: true });
const file = join(root, 'bench', 'results', `ratelimit-scale-pg${postgres.major}-${new Date().toISOString().slice(0, 19).replace(/:/g, '')}.json`);
const machine = { cpus: availableParallelism(), node: process.version };
writeFileSync(
  file,
  JSON.stringify({ when: new Date().toISOString(), machine, postgres: postgres.major, database: durable ? 'durable' : 'fsync off', seconds, rate, connections, limit, table, summary, runs }, null, 2) + '\n',
);
console.log(`written: ${file}`);
