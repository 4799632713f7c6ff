import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { loadBuildInfo } from '../../src/app/buildInfo.ts';
import { listMigrationFiles, migrationStatus } from '../../src/platform/db/migrations.ts';
import { runCli } from '../support/cluster.ts';
import { type TestDatabase, createTestDatabase } from '../support/database.ts';

// Each refusal leaves the deployment repository as it was and says why in one line, without a stack.
const OVERLAY = 'deploy/kubernetes/overlays/production';
const GIT_ENV = { GIT_AUTHOR_NAME: 'Test', GIT_AUTHOR_EMAIL: 'test@example.com', GIT_COMMITTER_NAME: 'Test', GIT_COMMITTER_EMAIL: 'test@example.com' };
const overlayAt = (tag: string) =>
  `resources:\n  - ../../base\nimages:\n  - name: backplane\n    newName: registry.example.com/backplane\n    newTag: "${tag}"\n`;
const lockAt = (release: string) => `${JSON.stringify({ format: 2, release })}\n`;

let db: TestDatabase;

test.before(async () => {
  db = await createTestDatabase();
});

test.after.always(async () => {
  await db?.drop();
});

const env = (url = db.url) => ({ DATABASE_URL: url, APP_METRICS_PORT: '1', ...GIT_ENV });

interface Deployment {
  /** A folder outside the repository, next to it. */
  outside: string;
  repo: string;
  git(...args: string[]): string;
  /** What a refusal must not change: HEAD, the branch, the status and every branch. */
  state(): { head: string; branch: string; status: string; branches: string };
}

/** A deployment repository at v0.5 in its own folder; setup adds files (and links) before the commit. */
function deployment(t: ExecutionContext, setup: (repo: string, outside: string) => void = () => undefined): Deployment {
  const base = mkdtempSync(join(tmpdir(), 'backplane-refusal-'));
  t.teardown(() => rmSync(base, { recursive: true, force: true }));
  const repo = join(base, 'repo');
  const outside = join(base, 'outside');
  mkdirSync(join(repo, OVERLAY), { recursive: true });
  mkdirSync(outside);
  const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, encoding: 'utf8', env: { ...process.env, ...GIT_ENV } }).trim();
  git('init', '-q', '-b', 'main');
  writeFileSync(join(repo, OVERLAY, 'kustomization.yaml'), overlayAt('0.5.0'));
  setup(repo, outside);
  git('add', '-A');
  git('commit', '-q', '-m', 'deployment at v0.5');
  const state = () => ({
    head: git('rev-parse', 'HEAD'),
    branch: git('symbolic-ref', '--short', 'HEAD'),
    status: git('status', '--porcelain'),
    branches: git('branch', '--list'),
  });
  return { outside, repo, git, state };
}

/** Exactly one non-empty line on stderr and no stack frame. */
function saysOneLine(t: ExecutionContext, stderr: string): void {
  t.is(stderr.split('\n').filter((line) => line.trim()).length, 1, stderr);
  t.notRegex(stderr, /^ {4}at /m);
}

const refusedLock = test.macro({
  async exec(t, lock: string) {
    const { repo, state } = deployment(t, (dir) => writeFileSync(join(dir, 'backplane.lock'), lock));
    const before = state();
    const result = await runCli(['upgrade', '--dir', repo], env());
    t.is(result.code, 1, result.stdout);
    saysOneLine(t, result.stderr);
    t.deepEqual(state(), before);
    t.is(readFileSync(join(repo, 'backplane.lock'), 'utf8'), lock);
  },
  title: (name = '') => `a lock file ${name} is refused in one line and the repository is left as it was`,
});

test.serial('naming a release newer than this build (v0.9): no downgrade is committed', refusedLock, lockAt('v0.9'));
test.serial('naming release "garbage"', refusedLock, lockAt('garbage'));
test.serial('naming release "__proto__"', refusedLock, lockAt('__proto__'));
test.serial('holding null', refusedLock, 'null\n');
test.serial('that is not JSON', refusedLock, '{"format": 2, "release": \n');
test.serial('holding a list', refusedLock, '[2, "0.5.0"]\n');

test.serial('an overlay already deploying a newer release than the target is refused: upgrade never goes backwards', async (t) => {
  const { repo, state } = deployment(t, (dir) => writeFileSync(join(dir, OVERLAY, 'kustomization.yaml'), overlayAt('0.9.0')));
  const before = state();
  const result = await runCli(['upgrade', '--dir', repo, '--from', 'v0.5'], env());
  t.is(result.code, 1, result.stdout);
  saysOneLine(t, result.stderr);
  t.deepEqual(state(), before);
});

const refusedLink = test.macro({
  async exec(t, link: (repo: string, outside: string) => { target: string; text: string | undefined }, flags: string[] = []) {
    let outsideFile = { target: '', text: undefined as string | undefined };
    const { repo, state } = deployment(t, (dir, outside) => {
      outsideFile = link(dir, outside);
    });
    const before = state();
    const result = await runCli(['upgrade', '--dir', repo, '--from', 'v0.5', ...flags], env());
    t.is(result.code, 1, result.stdout);
    saysOneLine(t, result.stderr);
    t.deepEqual(state(), before);
    // The file outside is neither created nor rewritten.
    t.is(existsSync(outsideFile.target) ? readFileSync(outsideFile.target, 'utf8') : undefined, outsideFile.text);
  },
  title: (name = '') => `${name}: refused before anything changes, the file outside untouched`,
});

test.serial('a committed backplane.lock linked to a lock outside the repository', refusedLink, (repo, outside) => {
  const target = join(outside, 'backplane.lock');
  writeFileSync(target, lockAt('0.5.0'));
  symlinkSync(target, join(repo, 'backplane.lock'));
  return { target, text: lockAt('0.5.0') };
});

test.serial('a committed backplane.lock linked to a missing file outside the repository', refusedLink, (repo, outside) => {
  const target = join(outside, 'created.lock');
  symlinkSync(target, join(repo, 'backplane.lock'));
  return { target, text: undefined };
});

test.serial('a committed kustomization.yaml linked to a file outside the repository', refusedLink, (repo, outside) => {
  const target = join(outside, 'kustomization.yaml');
  writeFileSync(target, overlayAt('0.5.0'));
  rmSync(join(repo, OVERLAY, 'kustomization.yaml'));
  symlinkSync(target, join(repo, OVERLAY, 'kustomization.yaml'));
  return { target, text: overlayAt('0.5.0') };
});

test.serial('an overlay folder inside the repository linked to a folder outside', refusedLink, (repo, outside) => {
  const target = join(outside, 'kustomization.yaml');
  writeFileSync(target, overlayAt('0.5.0'));
  rmSync(join(repo, OVERLAY), { recursive: true });
  symlinkSync(outside, join(repo, OVERLAY));
  return { target, text: overlayAt('0.5.0') };
});

test.serial(
  '--overlay ../elsewhere, outside the repository',
  refusedLink,
  (_repo, outside) => {
    const target = join(outside, 'kustomization.yaml');
    writeFileSync(target, overlayAt('0.5.0'));
    return { target, text: overlayAt('0.5.0') };
  },
  ['--overlay', '../outside'],
);

for (const to of ['v0.6.0-a..b', 'v0.6.0-a.lock']) {
  test.serial(`--to ${to}, which git refuses as a branch name, is refused in one line`, async (t) => {
    const { repo, state } = deployment(t);
    const before = state();
    const result = await runCli(['upgrade', '--dir', repo, '--from', 'v0.5', '--to', to], env());
    t.is(result.code, 2, result.stdout);
    saysOneLine(t, result.stderr);
    t.deepEqual(state(), before);
  });
}

test.serial('a database that was never migrated is refused in one line, and neither it nor the repository changes', async (t) => {
  const empty = await createTestDatabase({ migrated: false });
  t.teardown(() => empty.drop());
  const { repo, state } = deployment(t);
  const before = state();
  const result = await runCli(['upgrade', '--dir', repo, '--from', 'v0.5'], env(empty.url));
  t.is(result.code, 1, result.stdout);
  saysOneLine(t, result.stderr);
  t.deepEqual(state(), before);
  t.is((await migrationStatus(empty.pool)).current, 0);
});

test.serial('a database holding migrations this release does not know runs a newer release: refused', async (t) => {
  const ahead = await createTestDatabase();
  t.teardown(() => ahead.drop());
  await ahead.pool.query(`insert into schema_migrations (version, name) values (99991231000000, '99991231000000_from_a_newer_release')`);
  const { repo, state } = deployment(t);
  const before = state();
  const result = await runCli(['upgrade', '--dir', repo, '--from', 'v0.5'], env(ahead.url));
  t.is(result.code, 1, result.stdout);
  saysOneLine(t, result.stderr);
  t.deepEqual(state(), before);
});

test.serial('a commit git refuses (no author name) puts the repository back as it was', async (t) => {
  const { repo, state } = deployment(t);
  const before = state();
  const result = await runCli(['upgrade', '--dir', repo, '--from', 'v0.5'], { ...env(), GIT_AUTHOR_NAME: '', GIT_COMMITTER_NAME: '' });
  t.is(result.code, 1, result.stdout);
  saysOneLine(t, result.stderr);
  t.deepEqual(state(), before);
  t.false(existsSync(join(repo, 'backplane.lock')));
});

test.serial('a deployment already on this release has nothing to do: exit 0, one line, and --json says so', async (t) => {
  const release = `v${loadBuildInfo().version}`;
  const { repo, state } = deployment(t, (dir) => writeFileSync(join(dir, 'backplane.lock'), lockAt(release)));
  const before = state();
  const plain = await runCli(['upgrade', '--dir', repo], env());
  t.is(plain.code, 0, plain.stderr);
  t.is(plain.stdout.split('\n').filter((line) => line.trim()).length, 1, plain.stdout);
  const json = await runCli(['upgrade', '--dir', repo, '--json'], env());
  t.is(json.code, 0, json.stderr);
  t.like(JSON.parse(json.stdout), { nothing_to_do: true, committed: false });
  const noLock = await runCli(['upgrade', '--dir', repo, '--from', release, '--to', release, '--json'], env());
  t.is(noLock.code, 0, noLock.stderr);
  t.like(JSON.parse(noLock.stdout), { nothing_to_do: true });
  t.deepEqual(state(), before);
});

test.serial("in an application, a migration with the version of one of this release's is refused before anything changes, with advice that fits", async (t) => {
  const clashing = listMigrationFiles().at(-1)!;
  const { repo, state } = deployment(t, (dir) => {
    writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ name: 'my-service', dependencies: { backplane: '^0.5.0' } }, null, 2)}\n`);
    writeFileSync(join(dir, 'backplane.lock'), lockAt('0.5.0'));
    mkdirSync(join(dir, 'migrations'));
    writeFileSync(join(dir, 'migrations', `${clashing.version}_create_orders.sql`), 'create table orders (id bigint primary key);\n');
  });
  const before = state();
  // The database applied Backplane's migration of that version, not the application's: renaming the application's is right.
  const result = await runCli(['upgrade', '--dir', repo], env());
  t.is(result.code, 1, result.stdout);
  saysOneLine(t, result.stderr);
  t.regex(
    result.stderr,
    new RegExp(
      `migration ${clashing.name} has the version of the application's ${clashing.version}_create_orders, which your database has not applied: rename`,
    ),
  );
  t.deepEqual(state(), before);
  t.false(existsSync(join(repo, 'node_modules')));
});
