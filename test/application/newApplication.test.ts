// An application made the way a team makes one: `npm pack` of this repository, `backplane new
// --package <tarball>`, an install, its own `npm test`, `npx backplane` in it, `npm start`; then a second module made by
// copying the example folder and adding one line; then `backplane upgrade` of an application whose
// lock names v0.5: stopped at each step (install, load, migrations, tests, a SIGTERM) with the tree,
// node_modules and the database left as they were, then one that passes. One pack and one install
// are shared by every case (about 8 minutes here on 2 loaded cores; the timings are logged).
import test, { type ExecutionContext } from 'ava';
import { spawn } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { type TestDatabase, createTestDatabase } from '../support/database.ts';
import {
  GIT_ENV,
  type RunningApplication,
  TEST_ENCRYPTION_KEY,
  appCli,
  backplane,
  installedBackplane,
  npxBackplane,
  root,
  run,
  startApplication,
} from './support.ts';

const work = mkdtempSync(join(tmpdir(), 'backplane-application-'));
// As root the embedded PostgreSQL of the application's tests runs as the postgres user, which must enter this folder.
chmodSync(work, 0o755);
const app = join(work, 'my-service');
let tarball: string;
let db: TestDatabase;
let running: RunningApplication | undefined;
const timings: Record<string, number> = {};
const env = () => ({ DATABASE_URL: db.url });

const git = (...args: string[]) => run('git', args, { cwd: app });

/** The one JSON document a command printed, or a failure that shows what it said instead. */
function document<T>(ran: { stdout: string; stderr: string }): T {
  try {
    return JSON.parse(ran.stdout) as T;
  } catch {
    throw new Error(`no JSON on stdout; stderr: ${ran.stderr.slice(-2000)}`);
  }
}

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

test.serial("the new application's own tests pass: npm test", async (t) => {
  t.timeout(10 * 60_000);
  const tested = await run('npm', ['test'], { cwd: app, env: { DATABASE_URL: undefined } });
  timings.test = tested.ms;
  t.is(tested.code, 0, `${tested.stdout}\n${tested.stderr}`);
});

const ADMIN = 'admin@example.com';
let token: string;

test.serial("started with npm start, the notes route, setting, permission and job live beside Backplane's own", async (t) => {
  t.timeout(10 * 60_000);
  // Commands never migrate: on a database with no schema yet they say what to run, in one line.
  const early = await npxBackplane(app, ['accounts', 'create', '--email', ADMIN, '--role', 'platform_admin'], env());
  t.is(early.code, 2, early.stderr);
  t.regex(early.stderr, /^backplane: the database has no schema yet: run backplane migrate up [^\n]*\n$/);
  const migrated = await npxBackplane(app, ['migrate', 'up'], env());
  t.is(migrated.code, 0, migrated.stderr);
  // `npx backplane`, from any folder of the application, is its command line: Backplane's composed with its modules.
  for (const args of [
    ['accounts', 'create', '--email', ADMIN, '--role', 'platform_admin'],
    ['roles', 'create', 'notes_writer', '--permission', 'notes.write', '--permission', 'notes.read', '--reason', 'the example module'],
    ['roles', 'grant', ADMIN, 'notes_writer', '--reason', 'the example module'],
  ]) {
    const done = await npxBackplane(join(app, 'src', 'modules'), args, env());
    t.is(done.code, 0, `${args.join(' ')}: ${done.stderr}`);
  }
  const issued = await npxBackplane(app, ['token', 'issue', '--email', ADMIN], env());
  t.is(issued.code, 0, issued.stderr);
  token = issued.stdout.trim();
  const jobs = await npxBackplane(app, ['jobs', 'list', '--json'], env());
  t.is(jobs.code, 0, jobs.stderr);
  const jobNames = document<{ definitions: Array<{ name: string }> }>(jobs).definitions.map((job) => job.name);
  t.true(jobNames.includes('notes_census'), jobNames.join(', '));
  t.true(jobNames.includes('retention'));
  // npm run backplane stays the same command line.
  t.regex((await appCli(app, ['jobs', 'list'], env())).stdout, /^notes_census /m);
  const status = document<{ pending: number; migrations: Array<{ name: string; set: string; applied: boolean }> }>(
    await appCli(app, ['migrate', 'status', '--json'], env()),
  );
  t.is(status.pending, 0);
  t.like(
    status.migrations.find((migration) => migration.name === '20261126120000_create_notes'),
    { set: 'notes', applied: true },
  );
  t.true(status.migrations.some((migration) => migration.set === 'backplane'));

  const started = Date.now();
  running = await startApplication(app, env());
  timings.start = Date.now() - started;
  // The start-up hint's commands work as printed, in the application's folder.
  const hint = running
    .output()
    .split('\n')
    .flatMap((line) => {
      try {
        return (JSON.parse(line) as { next?: string[] }).next ?? [];
      } catch {
        return [];
      }
    })
    .find((command) => command.startsWith('npx backplane accounts create'));
  t.truthy(hint, running.output().slice(-2000));
  const hinted = await npxBackplane(app, hint!.split(' ').slice(2), env());
  t.is(hinted.code, 0, hinted.stderr);
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const created = await fetch(`${running.url}/notes`, { method: 'POST', headers, body: JSON.stringify({ title: 'first note' }) });
  t.is(created.status, 201);
  const note = (await created.json()) as { id: string };
  t.is((await fetch(`${running.url}/notes/${note.id}`, { headers })).status, 200);
  const listed = (await (await fetch(`${running.url}/notes`, { headers })).json()) as { notes: Array<{ id: string }> };
  t.true(listed.notes.some((item) => item.id === note.id));
  const settings = (await (await fetch(`${running.url}/ops/settings`, { headers })).json()) as { settings: Array<{ name: string }> };
  t.true(settings.settings.some((setting) => setting.name === 'notes.page_size'));
  t.true(settings.settings.some((setting) => setting.name === 'maintenance.enabled'));
  const openapi = (await (await fetch(`${running.url}/openapi.json`)).json()) as { paths: Record<string, unknown> };
  t.truthy(openapi.paths['/notes']);
  t.truthy(openapi.paths['/ops/settings']);
  // The module's task, built to JavaScript, runs on the instance's worker threads.
  const digest = await fetch(`${running.url}/notes/digest`, { headers });
  t.is(digest.status, 200, await digest.clone().text());
  t.like((await digest.json()) as object, { notes: 1 });
});

test.serial(
  "served from its TypeScript sources (npm run backplane -- serve), a module's .ts task runs on the pool; platform_admin needs no role",
  async (t) => {
    t.timeout(10 * 60_000);
    await running?.stop();
    running = undefined;
    const admin = 'owner@example.com';
    t.is((await npxBackplane(app, ['accounts', 'create', '--email', admin, '--role', 'platform_admin'], env())).code, 0);
    const issued = await npxBackplane(app, ['token', 'issue', '--email', admin], env());
    t.is(issued.code, 0, issued.stderr);
    running = await startApplication(app, env(), 'sources');
    const headers = { authorization: `Bearer ${issued.stdout.trim()}` };
    const digest = await fetch(`${running.url}/notes/digest`, { headers });
    t.is(digest.status, 200, `${await digest.clone().text()}\n${running.output().slice(-3000)}`);
    t.regex(((await digest.json()) as { sha256: string }).sha256, /^[0-9a-f]{64}$/);
    t.notRegex(running.output(), /Unknown file extension|task pool error/);
  },
);

test.serial('a second module is a copy of the example folder and one line in the module list', async (t) => {
  t.timeout(10 * 60_000);
  await running?.stop();
  running = undefined;
  // The copy renames what it declares (names, routes, table, its migration's version) in its own files; nothing outside it changes.
  const rename = (text: string) =>
    text
      .replaceAll('notes', 'memos')
      .replaceAll('Notes', 'Memos')
      .replaceAll('note', 'memo')
      .replaceAll('Note', 'Memo')
      .replaceAll('20261126120000', '20261126120001');
  const copy = join(app, 'src', 'modules', 'memos');
  cpSync(join(app, 'src', 'modules', 'notes'), copy, { recursive: true });
  for (const file of readdirSync(copy, { recursive: true, encoding: 'utf8' }).filter((name) => /\.(ts|sql)$/.test(name))) {
    const text = readFileSync(join(copy, file), 'utf8');
    rmSync(join(copy, file));
    writeFileSync(join(copy, rename(file)), rename(text));
  }
  // The one line in the module list.
  const list = join(app, 'src', 'application.ts');
  const before = readFileSync(list, 'utf8');
  const line = "    (await import('./modules/notes/index.ts')).notesModule,\n";
  const after = before.replace(line, `${line}${rename(line)}`);
  t.not(after, before);
  writeFileSync(list, after);
  t.deepEqual(readdirSync(join(app, 'src', 'modules')).sort(), ['memos', 'notes']);
  // Apart from the copied folder, the application changed by one added line: a module needing more fails here.
  t.is((await git('diff', '--numstat')).stdout, '1\t0\tsrc/application.ts\n');

  // The new module's migration is applied by migrate up (or serve), never by another command.
  const behind = await npxBackplane(app, ['roles', 'list'], env());
  t.is(behind.code, 2, behind.stderr);
  t.regex(
    behind.stderr,
    /^backplane: the database's schema is behind this code, 1 migration\(s\) pending \(20261126120001_create_memos\): run backplane migrate up/,
  );
  t.is((await npxBackplane(app, ['migrate', 'up'], env())).code, 0);
  const granted = await appCli(
    app,
    ['roles', 'create', 'memos_writer', '--permission', 'memos.write', '--permission', 'memos.read', '--reason', 'second module'],
    env(),
  );
  t.is(granted.code, 0, granted.stderr);
  t.is((await appCli(app, ['roles', 'grant', ADMIN, 'memos_writer', '--reason', 'second module'], env())).code, 0);
  running = await startApplication(app, env());
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const created = await fetch(`${running.url}/memos`, { method: 'POST', headers, body: JSON.stringify({ title: 'a memo' }) });
  t.is(created.status, 201);
  t.is((await fetch(`${running.url}/notes`, { headers })).status, 200);
  const jobs = await appCli(app, ['jobs', 'list', '--json'], env());
  t.regex(jobs.stdout, /memos_census/);
  await running.stop();
  running = undefined;
  // Kept for the upgrade below: the application as its team would have committed it.
  t.is((await git('add', '-A')).code, 0);
  t.is((await git('commit', '-q', '-m', 'A second module, memos')).code, 0);
});

/** git in the application, its exit code checked: the test's own setup must not fail quietly. */
async function gitOk(t: ExecutionContext, ...args: string[]): Promise<string> {
  const ran = await git(...args);
  t.is(ran.code, 0, `git ${args.join(' ')}: ${ran.stderr}`);
  return ran.stdout.trim();
}

/** The developer's migration ledger, read on a connection of its own that ends at once (a connected session stops PostgreSQL copying the database). */
async function ledger(): Promise<unknown[]> {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    return (await client.query('select version::text, name, applied_at from schema_migrations order by version')).rows;
  } finally {
    await client.end();
  }
}

/** What a failed upgrade must leave as it was: the commit, the branch, a clean tree, no upgrade branch, node_modules, the database's migrations. */
async function applicationState(t: ExecutionContext) {
  return {
    head: await gitOk(t, 'rev-parse', 'HEAD'),
    branch: await gitOk(t, 'rev-parse', '--abbrev-ref', 'HEAD'),
    porcelain: await gitOk(t, 'status', '--porcelain'),
    branches: await gitOk(t, 'branch', '--list', 'backplane-upgrade/*'),
    kept: existsSync(join(app, '.backplane-upgrade')),
    backplane: readFileSync(join(app, 'node_modules', 'backplane', 'package.json'), 'utf8'),
    modules: readdirSync(join(app, 'node_modules')).sort(),
    ledger: await ledger(),
  };
}

/** Exactly one line on stderr, no stack frame. */
function oneLine(t: ExecutionContext, stderr: string): string {
  const lines = stderr.split('\n').filter((line) => line.trim());
  t.is(lines.length, 1, stderr);
  t.notRegex(stderr, /^ {4}at /m);
  return lines[0] ?? '';
}

/** Commits a change that makes the upgrade fail, runs it, checks the step, its exit code and that nothing changed, then drops the change. */
const failedUpgrade = test.macro({
  async exec(t, step: string, code: number, reason: RegExp, change: () => void, flags: () => string[] = () => ['--package', tarball]) {
    t.timeout(10 * 60_000);
    change();
    await gitOk(t, 'add', '-A');
    await gitOk(t, 'commit', '-q', '--allow-empty', '-m', `makes the upgrade fail at ${step}`);
    try {
      const before = await applicationState(t);
      t.is(before.porcelain, '');
      const upgraded = await installedBackplane(app, ['upgrade', ...flags()], env());
      timings[`upgrade_${step}`] = upgraded.ms;
      t.is(upgraded.code, code, `${upgraded.stdout}\n${upgraded.stderr}`);
      const line = oneLine(t, upgraded.stderr);
      t.log(line);
      t.regex(line, new RegExp(`^backplane: upgrade failed at ${step}: `));
      t.regex(line, reason);
      t.regex(line, /nothing was changed: the working tree and your database are as they were/);
      t.notRegex(line, /the migrations failed/);
      t.deepEqual(await applicationState(t), before);
    } finally {
      await gitOk(t, 'reset', '-q', '--hard', 'HEAD~1');
    }
  },
  title: (name = '') =>
    `a failed upgrade (${name}) says the step in one line, exits with its code, and leaves the tree, node_modules and the database as they were`,
});

/** The entry declaration `new` writes, taken out as before 0.6; the upgrade must put it back. */
let declared: unknown;

test.serial('the application as made by v0.5, before its package.json declared the entry', async (t) => {
  const lockPath = join(app, 'backplane.lock');
  const lock = JSON.parse(readFileSync(lockPath, 'utf8')) as Record<string, unknown>;
  writeFileSync(lockPath, `${JSON.stringify({ ...lock, release: '0.5.0' }, null, 2)}\n`);
  await gitOk(t, 'commit', '-q', '-am', 'The application as made by v0.5');

  // doctor in the application checks its own API files (it keeps none: a skip), never the package's in node_modules.
  const doctor = await npxBackplane(app, ['doctor', '--json'], env());
  t.is(doctor.code, 0, `${doctor.stdout}\n${doctor.stderr}`);
  t.notRegex(doctor.stdout + doctor.stderr, /node_modules/);
  t.like(
    document<{ checks: Array<{ check: string }> }>(doctor).checks.find((check) => check.check === 'api_files'),
    { status: 'skip' },
  );

  const pkgPath = join(app, 'package.json');
  const { backplane: entry, ...undeclared } = JSON.parse(readFileSync(pkgPath, 'utf8')) as Record<string, unknown>;
  declared = entry;
  writeFileSync(pkgPath, `${JSON.stringify(undeclared, null, 2)}\n`);
  await gitOk(t, 'commit', '-q', '-am', 'No entry declared, as before 0.6');
});

test.serial(
  'install',
  failedUpgrade,
  'install',
  10,
  /.+/,
  () => writeFileSync(join(work, 'broken.tgz'), 'not a tarball\n'),
  () => ['--package', join(work, 'broken.tgz')],
);

// The application imports a name the new release no longer exports: it fails to load, and is told so, not as a migration.
test.serial('a name the release no longer exports', failedUpgrade, 'load', 11, /removedInThisRelease/, () => {
  const index = join(app, 'src', 'modules', 'notes', 'index.ts');
  writeFileSync(index, `${readFileSync(index, 'utf8')}\nimport { removedInThisRelease } from 'backplane';\nexport const stillUsed = removedInThisRelease;\n`);
});

test.serial('a migration that fails', failedUpgrade, 'migrations', 12, /20991231000000_broken/, () => {
  writeFileSync(join(app, 'migrations', '20991231000000_broken.sql'), 'select 1 / 0;\n');
});

test.serial('a test that fails', failedUpgrade, 'tests', 13, /a test that fails/, () => {
  writeFileSync(
    join(app, 'src', 'modules', 'notes', 'fails.test.ts'),
    "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\n\ntest('a test that fails', () => assert.equal(1, 2));\n",
  );
});

// npm start's database: the embedded PostgreSQL in .data, which the upgrade starts, copies and stops again.
test.serial('with the embedded database, a failed upgrade leaves it as it was and stopped', async (t) => {
  t.timeout(10 * 60_000);
  const embedded = { DATABASE_URL: undefined };
  t.is((await appCli(app, ['migrate', 'up'], embedded)).code, 0);
  writeFileSync(join(app, 'migrations', '20991231000000_broken.sql'), 'select 1 / 0;\n');
  await gitOk(t, 'add', '-A');
  await gitOk(t, 'commit', '-q', '-m', 'a migration that fails');
  try {
    const status = async () => {
      const ran = await appCli(app, ['migrate', 'status', '--json'], embedded);
      t.is(ran.code, 0, ran.stderr);
      return ran.stdout;
    };
    const before = { status: await status(), head: await gitOk(t, 'rev-parse', 'HEAD'), branches: await gitOk(t, 'branch', '--list', 'backplane-upgrade/*') };
    t.regex(before.status, /"pending_names":\["20991231000000_broken"\]/);
    const upgraded = await installedBackplane(app, ['upgrade', '--package', tarball], embedded);
    timings.upgrade_embedded = upgraded.ms;
    t.is(upgraded.code, 12, `${upgraded.stdout}\n${upgraded.stderr}`);
    const line = oneLine(t, upgraded.stderr);
    t.log(line);
    t.regex(line, /^backplane: upgrade failed at migrations: .*20991231000000_broken.*; nothing was changed/);
    t.is(await gitOk(t, 'status', '--porcelain'), '');
    t.false(existsSync(join(app, '.data', 'postgres', 'postmaster.pid')));
    t.deepEqual(
      { status: await status(), head: await gitOk(t, 'rev-parse', 'HEAD'), branches: await gitOk(t, 'branch', '--list', 'backplane-upgrade/*') },
      before,
    );
  } finally {
    await gitOk(t, 'reset', '-q', '--hard', 'HEAD~1');
  }
});

test.serial('an upgrade stopped by SIGTERM puts everything back and exits 143', async (t) => {
  t.timeout(10 * 60_000);
  const before = await applicationState(t);
  const child = spawn(process.execPath, [join(app, 'node_modules', 'backplane', 'dist', 'cli.js'), 'upgrade', '--package', tarball], {
    cwd: app,
    env: { ...process.env, ...GIT_ENV, ...env(), LOG_LEVEL: 'warn', APP_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY, npm_config_prefer_offline: 'true' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  // Once the copy of node_modules is made the upgrade is changing the tree: stop it there, mid-step.
  while (!existsSync(join(app, '.backplane-upgrade', 'node_modules')) && child.exitCode === null) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await new Promise((resolve) => setTimeout(resolve, 3000));
  child.kill('SIGTERM');
  t.is(await exited, 143, stderr);
  t.regex(oneLine(t, stderr), /^backplane: upgrade interrupted \(SIGTERM\) during \w+; nothing was changed/);
  t.deepEqual(await applicationState(t), before);
});

test.serial("upgrade of an application whose lock names v0.5 runs its tests and commits, exit 0; the developer's database is not migrated", async (t) => {
  t.timeout(10 * 60_000);
  const before = await applicationState(t);
  const statusBefore = await appCli(app, ['migrate', 'status', '--json'], env());
  t.is(statusBefore.code, 0, statusBefore.stderr);
  const upgraded = await installedBackplane(app, ['upgrade', '--package', tarball, '--json'], env());
  timings.upgrade = upgraded.ms;
  t.is(upgraded.code, 0, `${upgraded.stdout}\n${upgraded.stderr}`);
  t.notRegex(upgraded.stdout, /node_modules/);
  const report = document<{
    steps: { install: boolean; load: boolean; migrate: boolean; tests: boolean; doctor: { ok: boolean } };
    database: { copy: boolean };
    failed: unknown;
    committed: boolean;
    branch: string;
    lock: Record<string, unknown>;
  }>(upgraded);
  t.like(
    report,
    { committed: true, failed: null, database: { copy: true }, steps: { install: true, load: true, migrate: true, tests: true, doctor: { ok: true } } },
    upgraded.stderr,
  );
  t.like(report.lock, { format: 2, previous_release: '0.5.0' });
  t.is(await gitOk(t, 'rev-parse', '--abbrev-ref', 'HEAD'), report.branch);
  t.like(JSON.parse(readFileSync(join(app, 'backplane.lock'), 'utf8')) as object, { previous_release: '0.5.0' });
  // As an application made before package.json declared its entry: the upgrade declares it.
  t.deepEqual((JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')) as { backplane: unknown }).backplane, declared);
  const after = await applicationState(t);
  t.is(after.porcelain, '');
  t.false(after.kept);
  // The migrations were proved on a copy; the developer's database is migrated by npm start or migrate up, when they choose.
  t.deepEqual(after.ledger, before.ledger);
  const statusAfter = await appCli(app, ['migrate', 'status', '--json'], env());
  t.is(statusAfter.code, 0, statusAfter.stderr);
  t.is(statusAfter.stdout, statusBefore.stdout);
});
