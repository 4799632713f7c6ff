// The compatibility run's check against a real PostgreSQL 13 (`npm run test:compat -- pg13`): the
// primary and the commands that use the database refuse it with one line and exit 2.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, openEmbeddedDatabase } from '../../src/platform/db/embedded.ts';
import { runCli } from './cluster.ts';
import { testPostgresPrefix } from './database.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'backplane-old-server-'));
chmodSync(dataDir, 0o755);
const appDir = mkdtempSync(join(tmpdir(), 'backplane-old-server-app-'));
const server = await openEmbeddedDatabase({ dataDir, fast: true, packagePrefix: testPostgresPrefix() });
const failures: string[] = [];
try {
  const env = { DATABASE_URL: server.url, APP_DATA_DIR: appDir, APP_METRICS_PORT: '0', PORT: String(await freePort()) };
  for (const args of [
    ['serve', '--instances', '1'],
    ['migrate', 'status'],
    ['migrate', 'up'],
    ['accounts', 'list'],
  ]) {
    const result = await runCli(args, env);
    const lines = result.stderr.trim().split('\n');
    const refused = result.code === 2 && lines.length === 1 && /runs PostgreSQL 13\.\d+; Backplane needs PostgreSQL 14 or newer$/.test(lines[0]!);
    console.log(`${refused ? 'ok' : 'FAILED'}: backplane ${args.join(' ')} exits ${result.code}: ${result.stderr.trim()}`);
    if (!refused) {
      failures.push(args.join(' '));
    }
  }
} finally {
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(appDir, { recursive: true, force: true });
}
process.exit(failures.length > 0 ? 1 : 0);
