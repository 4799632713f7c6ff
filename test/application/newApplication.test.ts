// An application made the way a team makes one: `npm pack` of this repository, `backplane new
// --package <tarball>`, an install, its own `npm test`, `npm start`; then a second module made by
// copying the example folder and adding one line; then `backplane upgrade` of an application whose
// lock names v0.5, with its tests run, and stopped by a failing one. One pack and one install are
// shared by every case (about LIMIT minutes here; see the report in the log).
import test from 'ava';
import { cpSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { root } from '../support/cluster.ts';
import { type TestDatabase, createTestDatabase } from '../support/database.ts';
import { type RunningApplication, appCli, backplane, run, startApplication } from './support.ts';

const work = mkdtempSync(join(tmpdir(), 'backplane-application-'));
const app = join(work, 'my-service');
let tarball: string;
let db: TestDatabase;
let running: RunningApplication | undefined;
const timings: Record<string, number> = {};
const env = () => ({ DATABASE_URL: db.url });

const git = (...args: string[]) => run('git', args, { cwd: app });

test.before(async (t) => {
  t.timeout(15 * 60_000);
  db = await createTestDatabase({ migrated: false });
  const packed = await run('npm', ['pack', '--silent', '--pack-destination', work], { cwd: root });
  t.is(packed.code, 0, packed.stderr);
  timings.pack = packed.ms;
  tarball = join(work, packed.stdout.trim().split('\n').pop()!);
  const created = await backplane(['new', app, '--package', tarball], work);
  t.is(created.code, 0, created.stderr);
  timings.new = created.ms;
  const installed = await run('npm', ['install'], { cwd: app });
  t.is(installed.code, 0, installed.stderr);
  timings.install = installed.ms;
});

test.after.always(async (t) => {
  await running?.stop();
  await db?.drop();
  rmSync(work, { recursive: true, force: true });
  t.log(`timings (ms): ${JSON.stringify(timings)}`);
});

test.serial('the new application\'s own tests pass: npm test', async (t) => {
  t.timeout(10 * 60_000);
  const tested = await run('npm', ['test'], { cwd: app, env: { DATABASE_URL: undefined } });
  timings.test = tested.ms;
  t.is(tested.code, 0, `${tested.stdout}\n${tested.stderr}`);
});
