// bench/system/stack.ts: the platform's HTTP stack alone (stackServer.ts, no database) against a bare
// Koa route, each one process, and with BENCH_BASE_ROOT=<another checkout> that checkout's stack
// too; servers take turns round after round (BENCH_ROUNDS=5 of BENCH_SECONDS=4, 20 connections),
// reporting req/s and the server's CPU per request. It builds this checkout (dist/, as the service
// runs); BENCH_BASE_ROOT must be built already. No database: it runs in about two minutes.
// node --import tsx bench/system/stack.ts
import { join } from 'node:path';
import autocannon from 'autocannon';
import { cpuMsBetween, treeCpu } from '../ratelimit/cpu.ts';
import { buildService, median, root, startScript } from '../support/harness.ts';

buildService();

const rounds = Number(process.env.BENCH_ROUNDS ?? '5');
const seconds = Number(process.env.BENCH_SECONDS ?? '4');
const base = process.env.BENCH_BASE_ROOT;
const servers = [
  { name: 'bare koa', server: await startScript(join(root, 'bench', 'system', 'bareServer.ts'), { BENCH_WORKERS: '1' }, '/') },
  { name: 'stack', server: await startScript(join(root, 'bench', 'system', 'stackServer.ts'), {}, '/readyz') },
  ...(base ? [{ name: 'stack (base)', server: await startScript(join(root, 'bench', 'system', 'stackServer.ts'), { BENCH_STACK_ROOT: base }, '/readyz') }] : []),
];
const figures = new Map<string, Array<{ rate: number; cpuUs: number }>>();
try {
  for (let round = 0; round < rounds; round += 1) {
    for (const { name, server } of round % 2 ? [...servers].reverse() : servers) {
      const pid = server.child.pid!;
      const before = treeCpu([pid]);
      const result = await autocannon({ url: `${server.url}/${name === 'bare koa' ? '' : 'readyz'}`, connections: 20, duration: seconds });
      const cpuUs = (cpuMsBetween(before, treeCpu([pid]), pid) * 1000) / Math.max(1, result.requests.total);
      figures.set(name, [...(figures.get(name) ?? []), { rate: result.requests.average, cpuUs }]);
    }
  }
} finally {
  for (const { server } of servers) {
    await server.stop();
  }
}
const bare = figures.get('bare koa')!;
for (const [name, runs] of figures) {
  const ratios = runs.map((run, round) => Number((run.rate / bare[round]!.rate).toFixed(2)));
  console.log(`${name}: median ${Math.round(median(runs.map((r) => r.rate)))} req/s, ${median(runs.map((r) => r.cpuUs)).toFixed(1)} µs CPU per request; req/s vs bare by round ${ratios.join(' ')} (median ${median(ratios)})`);
}
