import test from 'ava';
import { runCli, waitFor } from '../../support/cluster.ts';
import { useInstances } from '../../support/fixture.ts';
import { getJson, sendJson } from '../../support/http.ts';
import { assertProblem } from '../../support/problems.ts';
import { accountWithToken, bearer } from '../../support/tokens.ts';

const app = useInstances(test, { accounts: { admin: { roles: ['platform_admin'] }, viewer: { roles: ['ops_viewer'] } } });

const putRole = (name: string, body: unknown, headers = app.headers.admin) => sendJson('PUT', `${app.instance.url}/ops/roles/${name}`, body, headers);
const roleEvents = async (name: string) =>
  (await app.db.pool.query(`select action, actor_kind, metadata from audit_events where resource_type = 'role' and resource_id = $1 order by id`, [name])).rows;

test('the roles list shows the built-in roles and their patterns', async (t) => {
  const { status, body } = await getJson(`${app.instance.url}/ops/roles`, app.headers.viewer);
  t.is(status, 200);
  t.like(body.roles.find((role: any) => role.name === 'platform_admin'), { builtin: true, permissions: ['ops.*'] });
  t.like(body.roles.find((role: any) => role.name === 'ops_viewer'), { builtin: true, permissions: ['ops.*.read'] });
  await assertProblem(t, await putRole('anything', { permissions: [], reason: 'r' }, app.headers.viewer), 403, 'forbidden');
});

test.serial('a custom role is created, changed and audited; an account holding it gains the permission', async (t) => {
  const created = await putRole('auditors', { permissions: ['ops.audit.read', 'ops.audit.read'], reason: 'audit team', version: 0 });
  t.is(created.status, 201);
  t.like(await created.json(), { name: 'auditors', permissions: ['ops.audit.read'], builtin: false, version: 1 });

  const member = await accountWithToken(app.db.pool, { roles: ['auditors'] });
  await assertProblem(t, await fetch(`${app.instance.url}/ops/system`, { headers: bearer(member.token) }), 403, 'forbidden');

  const changed = await putRole('auditors', { permissions: ['ops.system.read', 'ops.audit.read'], reason: 'they watch health too', version: 1 });
  t.is(changed.status, 200);
  t.like(await changed.json(), { permissions: ['ops.audit.read', 'ops.system.read'], version: 2 });
  await waitFor(async () => ((await fetch(`${app.instance.url}/ops/system`, { headers: bearer(member.token) })).status === 200 ? true : undefined), 2_000, 'the grant');

  const same = await putRole('auditors', { permissions: ['ops.audit.read', 'ops.system.read'], reason: 'again' });
  t.like(await same.json(), { version: 2 });
  const events = await roleEvents('auditors');
  t.deepEqual(events.map((event) => event.action), ['auth.role.created', 'auth.role.changed']);
  t.deepEqual(events[1].metadata, {
    old_permissions: ['ops.audit.read'],
    new_permissions: ['ops.audit.read', 'ops.system.read'],
    version: 2,
    reason: 'they watch health too',
  });
  t.is(events[0].actor_kind, 'account');
});

test('built-in roles cannot be changed: 409 role_builtin', async (t) => {
  await assertProblem(t, await putRole('platform_admin', { permissions: ['ops.system.read'], reason: 'narrow it' }), 409, 'role_builtin');
  await assertProblem(t, await putRole('ops_viewer', { permissions: [], reason: 'empty it' }), 409, 'role_builtin');
  t.deepEqual(await roleEvents('platform_admin'), []);
});

test('bad role changes are refused with their codes and change nothing', async (t) => {
  await assertProblem(t, await putRole('watchers', { permissions: ['ops.everything'], reason: 'r' }), 422, 'unknown_permission');
  await assertProblem(t, await putRole('Bad-Name', { permissions: [], reason: 'r' }), 422, 'invalid_role_name');
  await assertProblem(t, await putRole('watchers', { permissions: ['ops.audit.read'] }), 422, 'validation_failed');
  await assertProblem(t, await putRole('watchers', { permissions: ['ops.audit.read'], reason: '  ' }), 422, 'validation_failed');
  await assertProblem(t, await putRole('watchers', { permissions: 'ops.audit.read', reason: 'r' }), 422, 'validation_failed');
  await assertProblem(t, await putRole('watchers', { permissions: ['ops.audit.read'], reason: 'r', version: 3 }), 409, 'role_version_conflict');
  t.deepEqual(await roleEvents('watchers'), []);
  t.is((await app.db.pool.query(`select 1 from roles where name = 'watchers'`)).rowCount, 0);
});

test('roles create and roles grant by command are audited as system:cli', async (t) => {
  const env = { DATABASE_URL: app.db.url };
  t.is((await runCli(['roles', 'create', 'oncall', '--permission', 'ops.jobs.run', '--reason', 'pager rota'], env)).code, 0);
  const member = await accountWithToken(app.db.pool);
  t.is((await runCli(['roles', 'grant', member.email, 'oncall'], env)).code, 0);
  const { rows } = await app.db.pool.query(
    `select action, resource_type, resource_id, actor_label, metadata from audit_events where action in ('auth.role.created', 'auth.role.granted') and actor_kind = 'system' order by id`,
  );
  t.deepEqual(rows.map((row) => [row.action, row.resource_type, row.resource_id, row.actor_label]), [
    ['auth.role.created', 'role', 'oncall', 'system:cli'],
    ['auth.role.granted', 'account', member.id, 'system:cli'],
  ]);
  t.like(rows[0].metadata, { new_permissions: ['ops.jobs.run'], reason: 'pager rota' });
  t.like(rows[1].metadata, { role: 'oncall' });
});
