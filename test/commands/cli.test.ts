import test from 'ava';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { root, runCli } from '../support/cluster.ts';
import { type TestDatabase, createTestDatabase } from '../support/database.ts';
import { compose } from '../../src/app/application.ts';
import { backplaneApplication } from '../../src/app/defaultApplication.ts';
import { RETENTION_JOB } from '../../src/modules/retention/index.ts';

let db: TestDatabase;

test.before(async () => {
  db = await createTestDatabase();
});

test.after.always(async () => {
  await db?.drop();
});

// No database in these: a command that tried to act would fail to connect, not exit 0.
const noDatabase = { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' };

test('bare backplane and help list the commands on stdout', async (t) => {
  for (const args of [[], ['help'], ['--help']]) {
    const result = await runCli(args, noDatabase);
    t.is(result.code, 0, result.stderr);
    t.regex(result.stdout, /^ {2}settings +read and change runtime settings/m);
    t.is(result.stderr, '');
  }
});

test('--version prints the package version', async (t) => {
  const result = await runCli(['--version'], noDatabase);
  t.is(result.code, 0);
  t.regex(result.stdout.trim(), /^\d+\.\d+\.\d+(-[\w.]+)?$/);
});

test('--help on a command or subcommand prints its usage and never acts', async (t) => {
  for (const args of [
    ['serve', '--help'],
    ['openapi', '--help', '--dir', '/nonexistent/should-not-exist'],
    ['maintenance', 'on', '--help'],
    ['settings', 'set', '-h'],
    ['help', 'jobs'],
    ['upgrade', '--help', '--from', 'v0.4'],
    ['doctor', '-h'],
  ]) {
    const result = await runCli(args, noDatabase);
    t.is(result.code, 0, `${args.join(' ')}: ${result.stderr}`);
    t.regex(result.stdout, /^usage: backplane /, args.join(' '));
    t.regex(result.stdout, /--help/);
  }
});

test('unknown commands, flags, missing values and stray words exit 2 with one line on stderr', async (t) => {
  const cases: Array<[string[], RegExp]> = [
    [['nope'], /unknown command "nope"/],
    [['maintenance', 'maybe'], /unknown subcommand "maintenance maybe"/],
    [['maintenance'], /needs a subcommand/],
    [['accounts', 'list', '--bogus'], /--bogus/],
    [['token', 'issue', '--email'], /--email/],
    [['roles', 'grant', 'a@example.com'], /missing ROLE/],
    [['settings', 'get', 'a', 'b'], /unexpected argument "b"/],
    [['token', 'issue', '--email', 'a@example.com', '--ttl', '2d'], /--ttl/],
    [['audit', 'stats', '--group-by', 'colour'], /--group-by/],
  ];
  for (const [args, message] of cases) {
    const result = await runCli(args, noDatabase);
    t.is(result.code, 2, args.join(' '));
    t.regex(result.stderr, message, args.join(' '));
    t.is(result.stderr.trim().split('\n').length, 1, args.join(' '));
    t.is(result.stdout, '', args.join(' '));
  }
});

test.serial('settings set goes through the settings service: validation, version, history and audit as system:cli', async (t) => {
  const env = { DATABASE_URL: db.url };
  const before = await runCli(['settings', 'get', 'maintenance.retry_after', '--json'], env);
  t.is(before.code, 0, before.stderr);
  const setting = JSON.parse(before.stdout) as { name: string; value: string; version: number };
  t.is(setting.name, 'maintenance.retry_after');

  const noReason = await runCli(['settings', 'set', 'maintenance.retry_after', '10m'], env);
  t.is(noReason.code, 1);
  t.regex(noReason.stderr, /setting_reason_required/);
  const outOfBounds = await runCli(['settings', 'set', 'maintenance.retry_after', '30s', '--reason', 'r'], env);
  t.regex(outOfBounds.stderr, /invalid_setting_value/);
  const unknown = await runCli(['settings', 'set', 'no.such', '1', '--reason', 'r'], env);
  t.regex(unknown.stderr, /setting_not_found/);
  const stale = await runCli(['settings', 'set', 'maintenance.retry_after', '1.5h', '--reason', 'r', '--version', String(setting.version + 5)], env);
  t.regex(stale.stderr, /setting_version_conflict/);

  const changed = await runCli(
    ['settings', 'set', 'maintenance.retry_after', '1.5h', '--reason', 'longer upgrade', '--version', String(setting.version), '--json'],
    env,
  );
  t.is(changed.code, 0, changed.stderr);
  t.like(JSON.parse(changed.stdout), { name: 'maintenance.retry_after', value: '1h30m', value_seconds: 5400, version: setting.version + 1 });
  const flag = await runCli(['settings', 'set', 'maintenance.enabled', 'false', '--reason', 'no change'], env);
  t.is(flag.code, 0, flag.stderr);

  const table = await runCli(['settings', 'list'], env);
  t.regex(table.stdout, /^NAME +VALUE +DEFAULT +VERSION +UPDATED BY$/m);
  t.regex(table.stdout, /^maintenance\.retry_after +1h30m +\S+ +\d+ +system:cli$/m);
  t.notRegex(table.stdout, /\t/);

  const { rows } = await db.pool.query(
    `select actor_kind, actor_label, metadata->>'reason' as reason from audit_events where action = 'settings.value.changed' and resource_id = 'maintenance.retry_after'`,
  );
  t.deepEqual(rows, [{ actor_kind: 'system', actor_label: 'system:cli', reason: 'longer upgrade' }]);
});

test.serial('jobs list, disable, enable and run go through the jobs service', async (t) => {
  const env = { DATABASE_URL: db.url };
  const listed = await runCli(['jobs', 'list', '--json'], env);
  t.is(listed.code, 0, listed.stderr);
  const definitions = (JSON.parse(listed.stdout) as { definitions: Array<{ name: string; enabled: boolean }> }).definitions;
  // The jobs the modules declare, collected by the one composition root; retention's is bound by its create.
  t.deepEqual(definitions.map((job) => job.name).sort(), [...compose(backplaneApplication).jobs.map((job) => job.name), RETENTION_JOB].sort());
  t.true(definitions.some((job) => job.name === 'ratelimit_cleanup' && job.enabled));

  const noReason = await runCli(['jobs', 'disable', 'ratelimit_cleanup'], env);
  t.is(noReason.code, 1);
  t.regex(noReason.stderr, /job_reason_required/);
  t.regex((await runCli(['jobs', 'disable', 'no_such_job', '--reason', 'r'], env)).stderr, /job_not_found/);

  const disabled = await runCli(['jobs', 'disable', 'ratelimit_cleanup', '--reason', 'investigating load'], env);
  t.is(disabled.code, 0, disabled.stderr);
  t.regex((await runCli(['jobs', 'run', 'ratelimit_cleanup'], env)).stderr, /job_definition_disabled/);
  t.regex((await runCli(['jobs', 'list'], env)).stdout, /^ratelimit_cleanup +no +/m);

  t.is((await runCli(['jobs', 'enable', 'ratelimit_cleanup', '--reason', 'load is fine'], env)).code, 0);
  const run = await runCli(['jobs', 'run', 'ratelimit_cleanup', '--json'], env);
  t.is(run.code, 0, run.stderr);
  t.like(JSON.parse(run.stdout), { job: 'ratelimit_cleanup', trigger: 'manual', state: 'queued' });
  t.regex((await runCli(['jobs', 'run', 'ratelimit_cleanup'], env)).stderr, /job_run_limited/);

  const { rows } = await db.pool.query(
    `select actor_label, metadata->'after'->>'enabled' as enabled, metadata->>'reason' as reason from audit_events where action = 'jobs.definition.changed' order by id`,
  );
  t.deepEqual(rows, [
    { actor_label: 'system:cli', enabled: 'false', reason: 'investigating load' },
    { actor_label: 'system:cli', enabled: 'true', reason: 'load is fine' },
  ]);
});

test.serial('instances list and audit stats print JSON and tables', async (t) => {
  const env = { DATABASE_URL: db.url };
  t.is((await runCli(['migrate', 'up'], env)).code, 0);
  await db.pool.query(
    `insert into release_instances (instance_id, version, runtime_version, host, pid, started_at, last_seen_at)
     values ('test-instance-1', '0.6.0-dev', 'v20', 'host-a', 42, now(), now())`,
  );
  const instances = await runCli(['instances', 'list', '--json'], env);
  t.is(instances.code, 0, instances.stderr);
  t.like((JSON.parse(instances.stdout) as { instances: unknown[] }).instances[0], { instance_id: 'test-instance-1', host: 'host-a', pid: 42, running: true });
  t.regex((await runCli(['instances', 'list', '--running'], env)).stdout, /^test-instance-1 +0\.6\.0-dev +- +host-a +42 +\S+ +\S+ +running$/m);

  await db.pool.query(
    `insert into audit_events (occurred_at, actor_kind, action, outcome) values (now() - interval '1 hour', 'system', 'test.cli.one', 'success'), (now() - interval '1 hour', 'system', 'test.cli.one', 'failure')`,
  );
  const stats = await runCli(['audit', 'stats', '--since', '3h', '--group-by', 'outcome', '--json'], env);
  t.is(stats.code, 0, stats.stderr);
  const body = JSON.parse(stats.stdout) as { group_by: string; total: number; groups: Array<{ key: string; count: number }> };
  t.is(body.group_by, 'outcome');
  t.true(body.groups.some((group) => group.key === 'failure' && group.count === 1));
  t.regex((await runCli(['audit', 'stats', '--since', '3h'], env)).stdout, /^test\.cli\.one +2$/m);
  t.is((await runCli(['audit', 'stats', '--since', '1h', '--until', '2h'], env)).code, 2);
});

test('commands never migrate: with a migration pending or no schema at all they refuse in one line naming migrate up (exit 2) and apply nothing', async (t) => {
  const folder = mkdtempSync(join(tmpdir(), 'backplane-pending-'));
  writeFileSync(join(folder, '20990101000000_fixture_step.sql'), 'select * from no_such_table;\n');
  const behind = await createTestDatabase();
  const empty = await createTestDatabase({ migrated: false });
  t.teardown(async () => {
    rmSync(folder, { recursive: true, force: true });
    await behind.drop();
    await empty.drop();
  });
  const fixtureCli = join(root, 'test', 'support', 'moduleMigrationsCli.ts');
  const ledger = async () => (await behind.pool.query<{ count: number }>('select count(*)::int as count from schema_migrations')).rows[0]!.count;
  const before = await ledger();
  const listed = await runCli(['jobs', 'list'], { DATABASE_URL: behind.url, BACKPLANE_TEST_MODULE_MIGRATIONS: folder }, undefined, fixtureCli);
  t.is(listed.code, 2, listed.stderr);
  t.regex(
    listed.stderr,
    /^backplane: the database's schema is behind this code, 1 migration\(s\) pending \(20990101000000_fixture_step\): run backplane migrate up, then this command again\n$/,
  );
  t.is(listed.stdout, '');
  t.is(await ledger(), before);

  const created = await runCli(['accounts', 'create', '--email', 'first@example.com'], { DATABASE_URL: empty.url });
  t.is(created.code, 2, created.stderr);
  t.regex(
    created.stderr,
    /^backplane: the database has no schema yet: run backplane migrate up \(or start the service, which applies migrations\), then this command again\n$/,
  );
  t.is((await empty.pool.query(`select to_regclass('schema_migrations') as ledger`)).rows[0].ledger, null);
});
