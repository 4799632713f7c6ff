// BENCH_SCENARIOS=statement npm run bench -- ratelimit: what DATABASE_POOLING=transaction costs the
// database per decision statement (ADR 0092). The same decisions on one connection, named with
// plan_cache_mode=force_generic_plan (session pooling) against unnamed and planned on every
// execution (transaction pooling), alternating BENCH_ROUNDS (3) times, BENCH_STATEMENTS (4,000)
// statements of 1 and of 10 keys each; the backend's CPU from /proc.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openRateLimitPool } from '../../src/modules/ratelimit/index.ts';
import { takeFromBuckets } from '../../src/modules/ratelimit/store.ts';
import { benchPostgres } from './postgres.ts';
import { root, startDatabase } from './processes.ts';

const rounds = Number(process.env.BENCH_ROUNDS ?? '3');
const statements = Number(process.env.BENCH_STATEMENTS ?? '4000');
const rule = { intervalUs: 1_000, burst: 1_000_000 };

const backendCpuMs = (pid: number) => {
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
};

const postgres = benchPostgres();
const database = await startDatabase(true, postgres.prefix);
const runs: Array<{ pooling: string; keys: number; round: number; usPerStatement: number }> = [];
try {
  for (let round = 0; round < rounds; round += 1) {
    for (const pooling of ['session', 'transaction'] as const) {
      const pool = openRateLimitPool(database.url, `bench-${pooling}`, 10_000, { connections: 1, pooling });
      try {
        const pid = (await pool.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
        for (const keys of [1, 10]) {
          const batches = Array.from({ length: statements }, (_v, index) =>
            Array.from({ length: keys }, (_k, key) =>
              createHash('sha256')
                .update(`${round}-${pooling}-${keys}-${index % 500}-${key}`)
                .digest(),
            ).sort(Buffer.compare),
          );
          const before = backendCpuMs(pid);
          for (const batch of batches) {
            await takeFromBuckets(
              pool,
              rule,
              batch,
              batch.map(() => 1),
            );
          }
          const usPerStatement = Number((((backendCpuMs(pid) - before) * 1000) / statements).toFixed(1));
          runs.push({ pooling, keys, round, usPerStatement });
          console.log(`${pooling} pooling, ${keys} keys: ${usPerStatement} us of backend CPU per statement`);
        }
      } finally {
        await pool.end();
      }
    }
  }
} finally {
  await database.stop();
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const table = (['session', 'transaction'] as const).flatMap((pooling) =>
  [1, 10].map((keys) => ({
    pooling,
    keys,
    medianUsPerStatement: median(runs.filter((r) => r.pooling === pooling && r.keys === keys).map((r) => r.usPerStatement)),
  })),
);
console.table(table);
mkdirSync(join(root, 'bench', 'results'), { recursive: true });
const file = join(root, 'bench', 'results', `ratelimit-statement-pg${postgres.major}-${new Date().toISOString().slice(0, 19).replace(/:/g, '')}.json`);
writeFileSync(file, JSON.stringify({ when: new Date().toISOString(), postgres: postgres.major, statements, rounds, table, runs }, null, 2) + '\n');
console.log(`written: ${file}`);
