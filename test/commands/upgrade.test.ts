import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { compareVersions, normalizeVersion } from '../../src/commands/upgradeVersions.ts';
import { runCli } from '../support/cluster.ts';
import { type TestDatabase, createTestDatabase } from '../support/database.ts';

const OVERLAY = 'deploy/kubernetes/overlays/production';
const GIT_ENV = { GIT_AUTHOR_NAME: 'Test', GIT_AUTHOR_EMAIL: 'test@example.com', GIT_COMMITTER_NAME: 'Test', GIT_COMMITTER_EMAIL: 'test@example.com' };

let db: TestDatabase;
let repo: string;

const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, encoding: 'utf8', env: { ...process.env, ...GIT_ENV } }).trim();

test.before(async () => {
  db = await createTestDatabase();
  repo = mkdtempSync(join(tmpdir(), 'backplane-deploy-'));
  git('init', '-q', '-b', 'main');
  mkdirSync(join(repo, OVERLAY), { recursive: true });
  // A deployment made at v0.5: no trusted proxies yet, three replicas.
  writeFileSync(
    join(repo, OVERLAY, 'kustomization.yaml'),
    `# the team's overlay\nresources:\n  - ../../base\nimages:\n  # our registry\n  - name: backplane\n    newName: registry.example.com/backplane\n    newTag: "0.5.0"\nreplicas:\n  - name: backplane\n    count: 3\n`,
  );
  git('add', '.');
  git('commit', '-q', '-m', 'deployment at v0.5');
  // Data that makes each release-note action necessary.
  await db.pool.query(
    `insert into audit_events (occurred_at, actor_kind, action, outcome)
     select now() - interval '400 days' - make_interval(days => n), 'system', 'test.old.event', 'success' from generate_series(1, 3) as n`,
  );
  await db.pool.query(`insert into roles (name, permissions, builtin) values ('support', array['ops.audit.read'], false)`);
  await db.pool.query(
    `insert into release_instances (instance_id, version, runtime_version, host, pid) values ('old-1', '0.5.0', 'v20', 'h', 1), ('old-2', '0.5.0', 'v20', 'h', 2)`,
  );
});

test.after.always(async () => {
  await db?.drop();
  if (repo) {
    rmSync(repo, { recursive: true, force: true });
  }
});

// Instances inserted at the start count as running for 15 minutes, however slow a loaded machine is.
const env = () => ({ DATABASE_URL: db.url, APP_METRICS_PORT: '1', APP_HEARTBEAT_SECONDS: '300', ...GIT_ENV });

test('release names: v0.5 is 0.5.0 and a pre-release comes before its release', (t) => {
  t.is(normalizeVersion('v0.5'), '0.5.0');
  t.is(normalizeVersion('0.6.0-dev'), '0.6.0-dev');
  t.is(normalizeVersion('five'), undefined);
  t.true(compareVersions('0.6.0-dev', '0.5.0') > 0);
  t.true(compareVersions('0.6.0-dev', '0.6.0') < 0);
  t.is(compareVersions('0.5.0', '0.5.0'), 0);
});

test('release names follow semver: numbered pre-releases sort by number, and what semver refuses is no release', (t) => {
  t.true(compareVersions('0.6.0-beta.10', '0.6.0-beta.9') > 0);
  t.true(compareVersions('0.6.0-beta.9', '0.6.0-beta.10') < 0);
  t.true(compareVersions('0.6.0-beta.2', '0.6.0-beta.10') < 0);
  t.true(compareVersions('0.6.0-beta', '0.6.0-beta.1') < 0);
  t.is(normalizeVersion('v0.9'), '0.9.0');
  for (const text of ['garbage', '__proto__', 'v0.6.0-a..b', '01.5', 'v0.6.0-01', '']) {
    t.is(normalizeVersion(text), undefined, text);
  }
});

test.serial('without a lock file --from is required; a backwards upgrade is refused and the same release has nothing to do', async (t) => {
  const noFrom = await runCli(['upgrade', '--dir', repo, '--dry-run'], env());
  t.is(noFrom.code, 2);
  t.regex(noFrom.stderr, /--from/);
  const backwards = await runCli(['upgrade', '--dir', repo, '--from', 'v0.7', '--dry-run'], env());
  t.is(backwards.code, 1);
  t.regex(backwards.stderr, /never goes backwards/);
  const same = await runCli(['upgrade', '--dir', repo, '--from', 'v0.5', '--to', 'v0.5', '--dry-run'], env());
  t.is(same.code, 0, same.stderr);
  t.regex(same.stdout, /nothing to upgrade/);
});

test.serial('a dirty deployment repository is refused', async (t) => {
  writeFileSync(join(repo, 'notes.txt'), 'work in progress\n');
  try {
    const dirty = await runCli(['upgrade', '--dir', repo, '--from', 'v0.5'], env());
    t.is(dirty.code, 1);
    t.regex(dirty.stderr, /uncommitted changes: commit or stash/);
    t.is(git('branch', '--list', 'backplane-upgrade/*'), '');
  } finally {
    rmSync(join(repo, 'notes.txt'));
  }
});

test.serial('--dry-run evaluates every action with numbers and changes nothing', async (t) => {
  const head = git('rev-parse', 'HEAD');
  // The two instances stay running however long the tests before took on a loaded machine.
  await db.pool.query(`update release_instances set last_seen_at = now() where instance_id in ('old-1', 'old-2')`);
  const result = await runCli(['upgrade', '--dir', repo, '--from', 'v0.4', '--dry-run'], env());
  t.is(result.code, 0, result.stderr);
  t.regex(result.stdout, /upgrade 0\.4\.0 → 0\.6\.0-dev/);
  t.regex(result.stdout, /^ {2}ACTION +Audit events older than 365 days/m);
  t.regex(result.stdout, /the first retention run will delete 3 audit events older than 8760h \(oldest: \d{4}-\d{2}-\d{2}\)/);
  t.regex(result.stdout, /custom roles without ops\.system\.read: support/);
  t.regex(result.stdout, /several instances \(2 running, 3 replicas in the overlay\)/);
  t.regex(result.stdout, /APP_TRUSTED_PROXIES is not set in the overlay/);
  t.regex(result.stdout, /would create branch backplane-upgrade\/0\.6\.0-dev/);
  t.is(git('rev-parse', 'HEAD'), head);
  t.is(git('branch', '--list', 'backplane-upgrade/*'), '');
  t.is(git('status', '--porcelain'), '');
  t.false(existsSync(join(repo, 'backplane.lock')));
  const { rows } = await db.pool.query(`select count(*)::int as n from audit_events where action = 'test.old.event'`);
  t.is(rows[0].n, 3);
});

test.serial('an upgrade commits the image tag and a format 2 lock on its branch, migrates and runs doctor; the next one reads the lock', async (t) => {
  const result = await runCli(['upgrade', '--dir', repo, '--from', 'v0.5'], env());
  t.true(result.code === 0 || result.code === 1, result.stderr);
  t.regex(result.stdout, /committed on branch backplane-upgrade\/0\.6\.0-dev/);
  t.regex(result.stdout, /^doctor:$/m);
  t.regex(result.stdout, /^(ok|warn|fail) +migrations +/m);
  t.is(git('rev-parse', '--abbrev-ref', 'HEAD'), 'backplane-upgrade/0.6.0-dev');
  t.regex(git('log', '-1', '--format=%s'), /Upgrade backplane 0\.5\.0 → 0\.6\.0-dev/);
  const overlay = readFileSync(join(repo, OVERLAY, 'kustomization.yaml'), 'utf8');
  t.regex(overlay, /newTag: "0\.6\.0-dev"/);
  t.regex(overlay, /# our registry/);
  const lock = JSON.parse(readFileSync(join(repo, 'backplane.lock'), 'utf8')) as Record<string, unknown>;
  t.like(lock, { format: 2, release: '0.6.0-dev', previous_release: '0.5.0', image: 'registry.example.com/backplane:0.6.0-dev', overlay: OVERLAY });
  t.true(typeof lock.migration === 'number' && lock.migration > 0);
  t.is(git('status', '--porcelain'), '');

  const again = await runCli(['upgrade', '--dir', repo, '--dry-run'], env());
  t.is(again.code, 0, again.stderr);
  t.regex(again.stdout, /already runs 0\.6\.0-dev/);
  const mismatch = await runCli(['upgrade', '--dir', repo, '--from', 'v0.4', '--dry-run'], env());
  t.is(mismatch.code, 1);
  t.regex(mismatch.stderr, /backplane\.lock says this deployment runs 0\.6\.0-dev/);
});
