import test from 'ava';
import { CLI_ACTOR } from '../../src/modules/audit/index.ts';
import { compose } from '../../src/app/application.ts';
import { backplaneApplication } from '../../src/app/defaultApplication.ts';
import { heldPermissions, permissionsNotHeld } from '../../src/modules/auth/roleChanges.ts';
import { type TestDatabase, createTestDatabase } from '../support/database.ts';
import { runCli, waitFor } from '../support/cluster.ts';
import { startTestInstance } from '../support/instance.ts';

/** The permissions the composed application's modules declare (no central list). */
const PERMISSIONS = [...compose(backplaneApplication).permissions.keys()];

let db: TestDatabase;

test.before(async () => {
  db = await createTestDatabase();
});

test.after.always(async () => {
  await db?.drop();
});

test.serial('an operator made with the CLI gets a token that reads /ops/system', async (t) => {
  const env = { DATABASE_URL: db.url };
  const created = await runCli(
    ['accounts', 'create', '--email', 'Ops@Example.com', '--role', 'ops_viewer', '--password-stdin'],
    env,
    'a long enough password\n',
  );
  t.is(created.code, 0, created.stderr);
  const duplicate = await runCli(['accounts', 'create', '--email', 'ops@example.com'], env);
  t.is(duplicate.code, 1);
  t.regex(duplicate.stderr, /account_exists/);

  const role = await runCli(['roles', 'create', 'auditors', '--permission', 'ops.audit.read'], env);
  t.is(role.code, 0, role.stderr);
  const unknown = await runCli(['roles', 'create', 'bad', '--permission', 'ops.everything'], env);
  t.regex(unknown.stderr, /unknown_permission/);
  t.is((await runCli(['roles', 'grant', 'ops@example.com', 'auditors'], env)).code, 0);
  const list = await runCli(['roles', 'list', '--json'], env);
  const listed = (JSON.parse(list.stdout) as { roles: Array<{ name: string; builtin: boolean; permissions: string[] }> }).roles;
  t.deepEqual(listed.find((role) => role.name === 'auditors')?.permissions, ['ops.audit.read']);
  t.true(listed.find((role) => role.name === 'platform_admin')?.builtin);
  t.regex((await runCli(['roles', 'list'], env)).stdout, /^auditors +- +ops\.audit\.read$/m);

  const issued = await runCli(['token', 'issue', '--email', 'ops@example.com', '--ttl', '5m'], { ...env, LOG_LEVEL: 'info' });
  t.is(issued.code, 0, issued.stderr);
  const token = issued.stdout.trim();
  t.regex(token, /^[\w-]+\.[\w-]+\.[\w-]+$/);
  const audited = await db.pool.query(`select actor_label, resource_id from audit_events where action = 'auth.token.issued'`);
  t.is(audited.rowCount, 1);
  t.is(audited.rows[0].actor_label, 'system:cli');

  const instance = await startTestInstance(db.url);
  try {
    const response = await fetch(`${instance.url}/ops/system`, { headers: { Authorization: `Bearer ${token}` } });
    t.is(response.status, 200);
  } finally {
    await instance.drain();
  }
});

test('token issue refuses an unknown account and a bad ttl', async (t) => {
  const missing = await runCli(['token', 'issue', '--email', 'nobody@example.com'], { DATABASE_URL: db.url });
  t.is(missing.code, 1);
  t.regex(missing.stderr, /account_not_found/);
  const ttl = await runCli(['token', 'issue', '--email', 'x@example.com', '--ttl', 'forever'], { DATABASE_URL: db.url });
  t.is(ttl.code, 2);
});

test.serial(
  'accounts create stores the normalised address; lock ends the token on a running instance, token issue is refused; unlock allows it again',
  async (t) => {
    const env = { DATABASE_URL: db.url };
    const created = await runCli(['accounts', 'create', '--email', ' \uff2c\uff4f\uff43\uff4b@Example.com. '], env);
    t.is(created.code, 0, created.stderr);
    const stored = await db.pool.query(`select email, email_normalized from accounts where email_normalized = 'lock@example.com'`);
    t.deepEqual(stored.rows, [{ email: 'Lock@Example.com', email_normalized: 'lock@example.com' }]);
    const refused = await runCli(['accounts', 'create', '--email', 'lo\u0007ck@example.com'], env);
    t.regex(refused.stderr, /invalid_email/);

    const issued = await runCli(['token', 'issue', '--email', 'LOCK@example.com'], env);
    t.is(issued.code, 0, issued.stderr);
    const instance = await startTestInstance(db.url);
    try {
      const me = () => fetch(`${instance.url}/auth/me`, { headers: { Authorization: `Bearer ${issued.stdout.trim()}` } });
      t.is((await me()).status, 200);
      const locked = await runCli(['accounts', 'lock', '--email', 'lock@example.com', '--reason', 'left the company'], env);
      t.is(locked.code, 0, locked.stderr);
      await waitFor(async () => ((await me()).status === 401 ? true : undefined), 10_000, 'the locked account refused');
      t.regex((await runCli(['accounts', 'list'], env)).stdout, /^lock@example\.com +\S+ +\S+ +locked$/im);
      t.regex((await runCli(['token', 'issue', '--email', 'lock@example.com'], env)).stderr, /account_locked/);
      t.is((await runCli(['accounts', 'unlock', '--email', 'lock@example.com'], env)).code, 0);
      t.is((await runCli(['token', 'issue', '--email', 'lock@example.com'], env)).code, 0);
    } finally {
      await instance.drain();
    }
    const audited = await db.pool.query(`select action, metadata->>'reason' as reason from audit_events where action like 'auth.account.%' order by id`);
    t.deepEqual(audited.rows, [
      { action: 'auth.account.locked', reason: 'left the company' },
      { action: 'auth.account.unlocked', reason: null },
    ]);
  },
);

test.serial(
  'the CLI is the operator, who holds every permission: the rule of the API lets it create and grant anything; any other system actor holds none',
  async (t) => {
    const env = { DATABASE_URL: db.url };
    const created = await runCli(
      ['roles', 'create', 'break_glass', ...PERMISSIONS.flatMap((permission) => ['--permission', permission]), '--reason', 'incident'],
      env,
    );
    t.is(created.code, 0, created.stderr);
    const account = await runCli(['accounts', 'create', '--email', 'glass@example.com', '--role', 'platform_admin', '--role', 'break_glass'], env);
    t.is(account.code, 0, account.stderr);
    const granted = await db.pool.query(
      `select ar.role_name from account_roles ar join accounts a on a.id = ar.account_id where a.email_normalized = 'glass@example.com' order by 1`,
    );
    t.deepEqual(
      granted.rows.map((row) => row.role_name),
      ['break_glass', 'platform_admin'],
    );
    const audited = await db.pool.query(
      `select action, actor_label, outcome from audit_events where metadata->>'role' in ('platform_admin', 'break_glass') or resource_id = 'break_glass' order by id`,
    );
    t.deepEqual(
      audited.rows.map((row) => [row.action, row.actor_label, row.outcome]),
      [
        ['auth.role.created', 'system:cli', 'success'],
        ['auth.role.granted', 'system:cli', 'success'],
        ['auth.role.granted', 'system:cli', 'success'],
      ],
    );

    const missing = await runCli(['accounts', 'create', '--email', 'half@example.com', '--role', 'no_such_role'], env);
    t.regex(missing.stderr, /role_not_found/);
    t.is((await db.pool.query(`select 1 from accounts where email_normalized = 'half@example.com'`)).rowCount, 0);

    t.deepEqual([...(await heldPermissions(db.pool, CLI_ACTOR))].sort(), [...PERMISSIONS].sort());
    t.deepEqual(await permissionsNotHeld(db.pool, { kind: 'system', id: 'scheduler', label: 'system:scheduler' }, [], ['ops.*.read']), [
      'ops.accounts.read',
      'ops.audit.read',
      'ops.jobs.read',
      'ops.ratelimits.read',
      'ops.releases.read',
      'ops.roles.read',
      'ops.settings.read',
      'ops.system.read',
    ]);
  },
);
