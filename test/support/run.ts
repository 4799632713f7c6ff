// Starts a throw-away embedded PostgreSQL, migrates the template database every test file clones,
// runs ava, and stops the server whatever happens.
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
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

// Every answer the tests receive is checked against api/openapi.json (test/support/recordResponses.ts).
const responseReport = join(dataDir, 'responses.jsonl');
const ava = spawn(process.execPath, [join(process.cwd(), 'node_modules', 'ava', 'entrypoints', 'cli.mjs'), ...process.argv.slice(2)], {
  stdio: 'inherit',
  env: { ...process.env, BACKPLANE_TEST_ADMIN_URL: adminUrl, BACKPLANE_RESPONSE_REPORT: responseReport },
});

/** Exit code of the response check: 1 when an answer the tests received is not declared by the document. */
function judgeResponses(): number {
  const lines = existsSync(responseReport) ? readFileSync(responseReport, 'utf8').split('\n').filter(Boolean) : [];
  const problems = [...new Set(lines.flatMap((line) => (JSON.parse(line) as { problems: string[] }).problems))];
  const operations = new Set(lines.map((line) => (JSON.parse(line) as { operation: string }).operation));
  console.log(`\n${lines.length} answers to ${operations.size} documented operations checked against api/openapi.json: ${problems.length ? `${problems.length} undeclared` : 'all declared'}`);
  problems.slice(0, 50).forEach((problem) => console.error(`  undeclared: ${problem}`));
  return problems.length ? 1 : 0;
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => ava.kill(signal));
}
ava.on('exit', (code, signal) => {
  const exitCode = code ?? (signal ? 1 : 0);
  const responses = exitCode === 0 ? judgeResponses() : 0;
  void stop().then(() => process.exit(exitCode || responses));
});
