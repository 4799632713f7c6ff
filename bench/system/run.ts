// bench/system: 2 instances; /readyz and /ops/system against a bare Koa route, in one run.
// Goals: /readyz at least 0.8x the bare route's req/s (issue 33; 0.7x before); /ops/system p99 under 20 ms at 50 connections.
import { join } from 'node:path';
import { TEST_ENCRYPTION_KEY } from '../../test/support/instance.ts';
import { accountWithToken } from '../../test/support/tokens.ts';
import { createPool } from '../../src/platform/db/pool.ts';
import { buildService, load, printTable, root, startDatabase, startScript, startService, writeResults } from '../support/harness.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? '10');
const database = await startDatabase();
buildService();
const pool = createPool({ connectionString: database.url, max: 2, applicationName: 'bench' });
const { token } = await accountWithToken(pool, { roles: ['ops_viewer'], ttlSeconds: 3600 });
await pool.end();

// The key the token's signing key was sealed with (test/support/tokens.ts): without it the service refuses to start.
const service = await startService(database.url, 2, { APP_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY });
const bare = await startScript(join(root, 'bench', 'system', 'bareServer.ts'), { BENCH_WORKERS: '2' }, '/');
try {
  const auth = { Authorization: `Bearer ${token}` };
  const results = [];
  results.push(await load('bare koa route (2 workers)', { url: `${bare.url}/`, duration: seconds }));
  results.push(await load('GET /readyz (2 instances)', { url: `${service.url}/readyz`, duration: seconds }));
  results.push(await load('GET /ops/system (2 instances)', { url: `${service.url}/ops/system`, headers: auth, duration: seconds }));
  results.push(await load('GET /ops/system, 1 connection (idle p99)', { url: `${service.url}/ops/system`, headers: auth, duration: Math.max(3, seconds / 2), connections: 1 }));
  printTable(results);
  const [bareRoute, readyz, system] = results;
  const summary = {
    readyz_to_bare: Number((readyz!.requestsPerSecond / bareRoute!.requestsPerSecond).toFixed(2)),
    ops_system_p99_ms_at_50: system!.p99Ms,
    goals: { readyz_to_bare: '>= 0.8', ops_system_p99_ms_at_50: '< 20' },
  };
  console.log(summary);
  console.log(`written: ${writeResults('system', { when: new Date().toISOString(), seconds, results, summary })}`);
} finally {
  await service.stop();
  await bare.stop();
  await database.stop();
}
