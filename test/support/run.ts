// Starts a throw-away embedded PostgreSQL, migrates the template database every test file clones,
// runs ava, and stops the server whatever happens.
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { openEmbeddedDatabase } from '../../src/platform/db/embedded.ts';
import { migrateUp } from '../../src/platform/db/migrations.ts';
import { TEMPLATE_DATABASE, testPostgresPrefix } from './database.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'backplane-test-'));
// As root the server runs as the postgres user, which must be able to enter this folder.
chmodSync(dataDir, 0o755);
const started = Date.now();
const server = await openEmbeddedDatabase({ dataDir, fast: true, packagePrefix: testPostgresPrefix() });
const adminUrl = server.url.replace(/\/backplane$/, '/postgres');
const stop = async () => {
  await server.stop().catch(() => undefined);
  rmSync(dataDir, { recursive: true, force: true });
};
let version: string;
try {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${TEMPLATE_DATABASE}`);
  version = (await admin.query<{ server_version: string }>('show server_version')).rows[0]!.server_version;
  await admin.end();
  const templatePool = new pg.Pool({ connectionString: server.url.replace(/\/backplane$/, `/${TEMPLATE_DATABASE}`), max: 1 });
  try {
    await migrateUp(templatePool);
  } finally {
    await templatePool.end();
  }
} catch (error) {
  // A migration that fails must not leave the server running behind the failed run.
  await stop();
  throw error;
}
console.log(`test database (PostgreSQL ${version}) ready in ${Date.now() - started} ms`);

const ava = spawn(process.execPath, [join(process.cwd(), 'node_modules', 'ava', 'entrypoints', 'cli.mjs'), ...process.argv.slice(2)], {
  stdio: 'inherit',
  env: { ...process.env, BACKPLANE_TEST_ADMIN_URL: adminUrl },
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => ava.kill(signal));
}
ava.on('exit', (code, signal) => {
  void stop().then(() => process.exit(code ?? (signal ? 1 : 0)));
});
