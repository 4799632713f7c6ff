// npm run bench -- <name>: runs bench/<name>/run.ts. Benchmarks are never part of npm test.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const name = process.argv[2];
const dir = import.meta.dirname;
const available = readdirSync(dir, { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && existsSync(join(dir, entry.name, 'run.ts')))
  .map((entry) => entry.name);
if (!name || !available.includes(name)) {
  console.error(`usage: npm run bench -- <${available.join('|')}>`);
  process.exit(2);
}
// BENCH_NODE=24 (or 22, 26): the whole benchmark (the service, its baselines, autocannon) on a Node
// users run, rather than this machine's Node 20: the runtimes price a request differently (bench/README.md).
const wanted = process.env.BENCH_NODE;
if (wanted && !process.version.startsWith(`v${wanted}.`)) {
  const { nodeBinary } = (await import(join(dir, '..', 'scripts', 'postgresVersions.mjs'))) as { nodeBinary(major: string): string };
  const { spawnSync } = await import('node:child_process');
  const ran = spawnSync(nodeBinary(wanted), [...process.execArgv, ...process.argv.slice(1)], { stdio: 'inherit' });
  process.exit(ran.status ?? 1);
}
// BENCH_SCENARIOS=scale: the limiter at one offered load over 2 to 16 instances (bench/ratelimit/scale.ts);
// BENCH_SCENARIOS=statement: a decision statement's cost, named against unnamed (statementCost.ts).
const own = { scale: 'scale.ts', statement: 'statementCost.ts' }[name === 'ratelimit' ? (process.env.BENCH_SCENARIOS ?? '') : ''];
await import(join(dir, name, own ?? 'run.ts'));
