import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { listMigrationFiles, migrateUp, migrationStatus } from '../../src/platform/db/migrations.ts';
import { runCli } from '../support/cluster.ts';
import { type TestDatabase, createTestDatabase } from '../support/database.ts';

// A deployment made before v0.5 whose database stopped at an older migration (the jobs tables, before identities,
// revocations, sessions, the rate-limit function and the audit rollup), upgraded as an operator
// would: the release notes are evaluated against that older schema, then the migrations run.
const OLDER_STATE = '20261122300000_create_jobs';
const OVERLAY = 'deploy/kubernetes/overlays/production';
const GIT_ENV = { GIT_AUTHOR_NAME: 'Test', GIT_AUTHOR_EMAIL: 'test@example.com', GIT_COMMITTER_NAME: 'Test', GIT_COMMITTER_EMAIL: 'test@example.com' };

let db: TestDatabase;
let repo: string;

const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, encoding: 'utf8', env: { ...process.env, ...GIT_ENV } }).trim();
// Instances inserted at the start count as running for 15 minutes, however slow a loaded machine is.
const env = () => ({ DATABASE_URL: db.url, APP_METRICS_PORT: '1', APP_HEARTBEAT_SECONDS: '300', ...GIT_ENV });
const files = listMigrationFiles();
const olderFiles = files.slice(0, files.findIndex((file) => file.name === OLDER_STATE) + 1);

test.before(async () => {
  db = await createTestDatabase({ migrated: false });
  await migrateUp(db.pool, olderFiles);
  repo = mkdtempSync(join(tmpdir(), 'backplane-deploy-'));
  git('init', '-q', '-b', 'main');
  mkdirSync(join(repo, OVERLAY), { recursive: true });
  writeFileSync(
    join(repo, OVERLAY, 'kustomization.yaml'),
    `resources:\n  - ../../base\nimages:\n  - name: backplane\n    newName: registry.example.com/backplane\n    newTag: "0.4.0"\nreplicas:\n  - name: backplane\n    count: 2\n`,
  );
  git('add', '.');
  git('commit', '-q', '-m', 'deployment at v0.4');
  // Data that makes each release-note action necessary, written as the older schema allows.
  await db.pool.query(
    `insert into audit_events (occurred_at, actor_kind, action, outcome)
     select now() - interval '400 days' - make_interval(days => n), 'system', 'test.old.event', 'success' from generate_series(1, 1204) as n`,
  );
  await db.pool.query(
    `insert into audit_events (occurred_at, actor_kind, action, outcome)
     select now() - make_interval(hours => n), 'system', 'test.recent.event', 'success' from generate_series(1, 50) as n`,
  );
  await db.pool.query(`insert into roles (name, permissions, builtin) values ('support', array['ops.audit.read'], false), ('billing', array[]::text[], false)`);
  await db.pool.query(
    `insert into release_instances (instance_id, version, runtime_version, host, pid) values ('old-1', '0.4.0', 'v20', 'h', 1), ('old-2', '0.4.0', 'v20', 'h', 2), ('old-3', '0.4.0', 'v20', 'h', 3)`,
  );
});

test.after.always(async () => {
  await db?.drop();
  if (repo) {
    rmSync(repo, { recursive: true, force: true });
  }
});

test.serial('on an older migration state, --dry-run evaluates every action with numbers and changes nothing', async (t) => {
  const before = await migrationStatus(db.pool);
  t.is(before.pending, files.length - olderFiles.length);
  const result = await runCli(['upgrade', '--dir', repo, '--from', 'v0.4', '--dry-run'], env());
  t.is(result.code, 0, result.stderr);
  t.regex(result.stdout, /the first retention run will delete 1,204 audit events older than 8760h \(oldest: \d{4}-\d{2}-\d{2}\)/);
  t.regex(result.stdout, /custom roles without ops\.system\.read: billing, support/);
  t.regex(result.stdout, /several instances \(3 running, 2 replicas in the overlay\)/);
  t.regex(result.stdout, new RegExp(`${before.pending} migration\\(s\\) pending`));
  t.is(git('status', '--porcelain'), '');
  t.is(git('branch', '--list', 'backplane-upgrade/*'), '');
  t.is((await migrationStatus(db.pool)).pending, before.pending);
});

test.serial('--json prints one document with the actions and their numbers, and nothing else', async (t) => {
  const result = await runCli(['upgrade', '--dir', repo, '--from', 'v0.4', '--dry-run', '--json'], env());
  t.is(result.code, 0, result.stderr);
  const report = JSON.parse(result.stdout) as {
    from: string;
    to: string;
    dry_run: boolean;
    releases: Array<{
      version: string;
      changes: Array<{ change: string; action: string; check: string | null; needed: boolean | null; finding: string | null }>;
    }>;
    branch: string;
    committed: boolean;
  };
  t.like(report, { from: '0.4.0', dry_run: true, committed: false, branch: `backplane-upgrade/${report.to}` });
  const checks = Object.fromEntries(
    report.releases
      .flatMap((release) => release.changes)
      .filter((change) => change.check)
      .map((change) => [change.check, change]),
  );
  t.like(checks.audit_retention, { needed: true });
  t.regex(checks.audit_retention!.finding!, /1,204 audit events/);
  t.like(checks.ops_system_read, { needed: true });
  t.like(checks.shared_limits, { needed: true });
  t.regex(checks.migrations!.finding!, /pending/);
  t.is(git('branch', '--list', 'backplane-upgrade/*'), '');
});

test.serial('the upgrade commits on its branch, applies every pending migration to the older state, and the rollup counts the old events', async (t) => {
  const result = await runCli(['upgrade', '--dir', repo, '--from', 'v0.4', '--json'], env());
  t.true(result.code === 0 || result.code === 1, result.stderr);
  const report = JSON.parse(result.stdout) as {
    committed: boolean;
    commit: string;
    migrations_applied: string[];
    doctor: { ok: boolean; checks: Array<{ check: string; status: string }> };
  };
  t.true(report.committed);
  t.is(report.commit, git('rev-parse', 'HEAD'));
  t.deepEqual(
    report.migrations_applied,
    files.slice(olderFiles.length).map((file) => file.name),
  );
  t.true(report.doctor.checks.some((check) => check.check === 'migrations' && check.status === 'ok'));
  t.is((await migrationStatus(db.pool)).pending, 0);
  const lock = JSON.parse(readFileSync(join(repo, 'backplane.lock'), 'utf8')) as { format: number; migration: number };
  t.is(lock.format, 2);
  t.is(lock.migration, files.at(-1)!.version);
  // Events written before the rollup existed are counted by it once migrated.
  const { rows } = await db.pool.query<{ events: number; rolled: number }>(
    `select (select count(*)::int from audit_events) as events, (select coalesce(sum(count), 0)::int from audit_event_rollup) + (select coalesce(sum(count), 0)::int from audit_event_rollup_deltas) as rolled`,
  );
  t.is(rows[0]!.rolled, rows[0]!.events);
  t.is(rows[0]!.events, 1254);
});
