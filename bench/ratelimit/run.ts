// bench/ratelimit: the shared per-address limit under load, side by side in one run with
// Koa + rate-limiter-flexible's RateLimiterPostgres (same database, limit and proxy handling) and a
// bare Koa route with no limiter, each on 4 clustered workers, driven by autocannon through a
// trusted loopback proxy (X-Forwarded-For). Scenarios: (a) one client flooding; (b) 10,000 clients
// each under its limit.
// Goals: over-admissions 0; (b) >= 3x the baseline; (a) >= 5x the baseline and >= 0.8x the bare route.
import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { type ScenarioResult, runScenario } from './load.ts';
import { type Server, root, startDatabase, startScript, startService } from './processes.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? '10');
const connections = Number(process.env.BENCH_CONNECTIONS ?? '100');
const instances = 4;
const limit = { limit: 60, periodSeconds: 60 };
const proxy = { APP_TRUSTED_PROXIES: '127.0.0.1/32' };

// Each server and run gets its own addresses, so no run starts with buckets another one spent.
const clientsOf = (server: number, block: number, count: number) =>
  Array.from({ length: count }, (_v, index) => `10.${server}.${block + (index >> 8)}.${index & 255}`);

async function metricLines(server: Server): Promise<string[]> {
  if (!server.metricsUrl) {
    return [];
  }
  const text = await (await fetch(server.metricsUrl)).text();
  return text.split('\n').filter((line) => line.startsWith('backplane_ratelimit_'));
}

/** Decision sources and fallbacks summed over the cluster's workers. */
function summariseMetrics(lines: string[]): Record<string, number> {
  const totals: Record<string, number> = {};
  for (const line of lines) {
    const source = /source="(\w+)"/.exec(line)?.[1];
    const reason = /reason="(\w+)"/.exec(line)?.[1];
    const name = line.startsWith('backplane_ratelimit_fallbacks_total') ? `fallback_${reason}` : `decided_${source}`;
    totals[name] = (totals[name] ?? 0) + Number(line.split(' ').pop());
  }
  return totals;
}

async function measure(name: string, index: number, server: Server, limited: boolean): Promise<ScenarioResult[]> {
  const common = { server: name, url: server.url, connections, limit: limited ? limit : null };
  const counted = async (scenario: Parameters<typeof runScenario>[0]) => {
    const before = summariseMetrics(await metricLines(server));
    const result = await runScenario(scenario);
    const after = summariseMetrics(await metricLines(server));
    if (server.metricsUrl) {
      result.decisions = Object.fromEntries(Object.entries(after).map(([key, value]) => [key, value - (before[key] ?? 0)]));
    }
    return result;
  };
  await runScenario({ ...common, scenario: 'warm-up', clients: clientsOf(index, 200, 2_000), seconds: 3 });
  const flood = await counted({ ...common, scenario: '(a) one client flooding', clients: clientsOf(index, 100, 1), seconds });
  const many = await counted({ ...common, scenario: '(b) 10,000 clients under the limit', clients: clientsOf(index, 0, 10_000), seconds });
  return [flood, many];
}

function printTable(results: ScenarioResult[]): void {
  const header = ['server', 'scenario', 'decisions/s', 'p50 ms', 'p99 ms', 'admitted', 'refused', 'over-admitted', 'errors'];
  const rows = results.map((r) => [r.server, r.scenario, String(r.decisionsPerSecond), String(r.p50Ms), String(r.p99Ms), String(r.admitted), String(r.refused), r.overAdmissions === null ? '-' : String(r.overAdmissions), String(r.errors)]);
  const widths = header.map((cell, column) => Math.max(cell.length, ...rows.map((row) => row[column]!.length)));
  const line = (cells: string[]) => cells.map((cell, column) => cell.padEnd(widths[column]!)).join('  ');
  console.log(line(header));
  rows.forEach((row) => console.log(line(row)));
}

const database = await startDatabase();
const results: ScenarioResult[] = [];
try {
  const bare = await startScript(join(root, 'bench', 'ratelimit', 'bareServer.ts'), { BENCH_WORKERS: String(instances) });
  results.push(...(await measure('bare koa, no limiter', 3, bare, false)));
  await bare.stop();

  const baseline = await startScript(join(root, 'bench', 'ratelimit', 'baselineServer.ts'), { BENCH_WORKERS: String(instances), DATABASE_URL: database.url, ...proxy });
  results.push(...(await measure('koa + RateLimiterPostgres', 2, baseline, true)));
  await baseline.stop();

  // Access logs off for the comparison: the baseline and the bare route log nothing either.
  const service = await startService({ DATABASE_URL: database.url, APP_INSTANCES: String(instances), LOG_LEVEL: 'warn', ...proxy });
  results.push(...(await measure('backplane', 1, service, true)));
  // The same stack on a path the limit does not cover: what the platform costs without a decision.
  results.push(await runScenario({ server: 'backplane, path not limited', scenario: '(a) one client flooding', url: service.url, path: '/ops/none', clients: clientsOf(1, 150, 1), seconds, connections, limit: null }));
  await service.stop();
} finally {
  await database.stop();
}

printTable(results);
const find = (server: string, scenario: string) => results.find((r) => r.server === server && r.scenario.startsWith(scenario))!;
const ratio = (a: ScenarioResult, b: ScenarioResult) => Number((a.decisionsPerSecond / b.decisionsPerSecond).toFixed(2));
const summary = {
  flood_vs_baseline: ratio(find('backplane', '(a)'), find('koa + RateLimiterPostgres', '(a)')),
  flood_vs_bare: ratio(find('backplane', '(a)'), find('bare koa, no limiter', '(a)')),
  many_clients_vs_baseline: ratio(find('backplane', '(b)'), find('koa + RateLimiterPostgres', '(b)')),
  many_clients_vs_bare: ratio(find('backplane', '(b)'), find('bare koa, no limiter', '(b)')),
  flood_vs_same_stack_unlimited: ratio(find('backplane', '(a)'), find('backplane, path not limited', '(a)')),
  over_admissions: find('backplane', '(a)').overAdmissions! + find('backplane', '(b)').overAdmissions!,
  goals: { flood_vs_baseline: '>= 5', flood_vs_bare: '>= 0.8', many_clients_vs_baseline: '>= 3', over_admissions: '0' },
};
console.log(summary);
for (const result of results.filter((r) => r.decisions)) {
  console.log(`backplane ${result.scenario}: decisions by source`, result.decisions);
}
mkdirSync(join(root, 'bench', 'results'), { recursive: true });
const file = join(root, 'bench', 'results', `ratelimit-${new Date().toISOString().slice(0, 19).replace(/:/g, '')}.json`);
const machine = { cpus: availableParallelism(), node: process.version };
writeFileSync(file, JSON.stringify({ when: new Date().toISOString(), machine, seconds, connections, instances, limit, results, summary }, null, 2) + '\n');
console.log(`written: ${file}`);
