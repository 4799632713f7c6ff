// Starts a throw-away embedded PostgreSQL, migrates the template database every test file clones,
// runs ava, and stops the server whatever happens.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestPostgres } from '../../src/testing/postgres.ts';

const started = Date.now();
const { adminUrl, version, stop: stopServer } = await startTestPostgres();
const reportDir = mkdtempSync(join(tmpdir(), 'backplane-responses-'));
const stop = async () => {
  await stopServer();
  rmSync(reportDir, { recursive: true, force: true });
};
console.log(`test database (PostgreSQL ${version}) ready in ${Date.now() - started} ms`);

// Every answer the tests receive is checked against api/openapi.json (test/support/recordResponses.ts).
const responseReport = join(reportDir, 'responses.jsonl');
const ava = spawn(process.execPath, [join(process.cwd(), 'node_modules', 'ava', 'entrypoints', 'cli.mjs'), ...process.argv.slice(2)], {
  stdio: 'inherit',
  env: { ...process.env, BACKPLANE_TEST_ADMIN_URL: adminUrl, BACKPLANE_RESPONSE_REPORT: responseReport },
});

/** Exit code of the response check: 1 when an answer the tests received is not declared by the document. */
function judgeResponses(): number {
  const lines = existsSync(responseReport) ? readFileSync(responseReport, 'utf8').split('\n').filter(Boolean) : [];
  const problems = [...new Set(lines.flatMap((line) => (JSON.parse(line) as { problems: string[] }).problems))];
  const operations = new Set(lines.map((line) => (JSON.parse(line) as { operation: string }).operation));
  console.log(
    `\n${lines.length} answers to ${operations.size} documented operations checked against api/openapi.json: ${problems.length ? `${problems.length} undeclared` : 'all declared'}`,
  );
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
