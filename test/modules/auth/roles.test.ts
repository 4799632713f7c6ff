import test from 'ava';
import { recordAuditEvent } from '../../../src/modules/audit/index.ts';
import { compose } from '../../../src/app/application.ts';
import { backplaneApplication } from '../../../src/app/defaultApplication.ts';
import { grantRoleBy, withRoleChange } from '../../../src/modules/auth/roleChanges.ts';
import { createRole } from '../../../src/modules/auth/service.ts';
import { runCli, waitFor } from '../../support/cluster.ts';
import { useInstances } from '../../support/fixture.ts';
import { getJson, sendJson } from '../../support/http.ts';
import { assertProblem } from '../../support/problems.ts';
import { accountWithToken, bearer } from '../../support/tokens.ts';

/** The permissions the composed application's modules declare (no central list). */
const PERMISSIONS = [...compose(backplaneApplication).permissions.keys()];

const app = useInstances(test, { accounts: { admin: { roles: ['platform_admin'] }, viewer: { roles: ['ops_viewer'] } } });

const putRole = (name: string, body: unknown, headers = app.headers.admin) => sendJson('PUT', `${app.instance.url}/ops/roles/${name}`, body, headers);
const roleEvents = async (name: string) =>
  (await app.db.pool.query(`select action, actor_kind, metadata from audit_events where resource_type = 'role' and resource_id = $1 order by id`, [name])).rows;

test('the roles list shows the built-in roles and their patterns: platform_admin every permission, ops_viewer the ops reads', async (t) => {
  const { status, body } = await getJson(`${app.instance.url}/ops/roles`, app.headers.viewer);
  t.is(status, 200);
  t.like(
    body.roles.find((role: any) => role.name === 'platform_admin'),
    { builtin: true, permissions: ['*'], description: 'Every permission of every module' },
  );
  t.like(
    body.roles.find((role: any) => role.name === 'ops_viewer'),
    { builtin: true, permissions: ['ops.*.read'] },
  );
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
  await waitFor(
    async () => ((await fetch(`${app.instance.url}/ops/system`, { headers: bearer(member.token) })).status === 200 ? true : undefined),
    2_000,
    'the grant',
  );

  const same = await putRole('auditors', { permissions: ['ops.audit.read', 'ops.system.read'], reason: 'again' });
  t.like(await same.json(), { version: 2 });
  const events = await roleEvents('auditors');
  t.deepEqual(
    events.map((event) => event.action),
    ['auth.role.created', 'auth.role.changed'],
  );
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
  t.deepEqual(
    rows.map((row) => [row.action, row.resource_type, row.resource_id, row.actor_label]),
    [
      ['auth.role.created', 'role', 'oncall', 'system:cli'],
      ['auth.role.granted', 'account', member.id, 'system:cli'],
    ],
  );
  t.like(rows[0].metadata, { new_permissions: ['ops.jobs.run'], reason: 'pager rota' });
  t.like(rows[1].metadata, { role: 'oncall' });
});

const roleOf = async (accountId: string) =>
  (
    await app.db.pool.query(`select r.name, r.permissions, r.version from account_roles ar join roles r on r.name = ar.role_name where ar.account_id = $1`, [
      accountId,
    ])
  ).rows[0];
const deniedEvents = async (action: string, resourceId: string) =>
  (await app.db.pool.query(`select actor_id, outcome, metadata from audit_events where action = $1 and resource_id = $2 order by id`, [action, resourceId]))
    .rows;

test('a role holding only ops.roles.read and ops.roles.write cannot widen itself or another role: 403 permission_not_held, audited, nothing changed', async (t) => {
  const escalator = await accountWithToken(app.db.pool, { permissions: ['ops.roles.read', 'ops.roles.write'] });
  const own = await roleOf(escalator.id);
  const headers = bearer(escalator.token);
  const everything = PERMISSIONS.filter((permission) => !['ops.roles.read', 'ops.roles.write'].includes(permission)).sort();

  const refused = await assertProblem(t, await putRole(own.name, { permissions: [...PERMISSIONS], reason: 'more power' }, headers), 403, 'permission_not_held');
  t.deepEqual(
    (refused.errors as Array<{ location: string }>).map((issue) => issue.location),
    everything.map(() => 'body.permissions'),
  );
  t.deepEqual(await roleOf(escalator.id), own);
  const events = await deniedEvents('auth.role.change_denied', own.name);
  t.is(events.length, 1);
  t.like(events[0], { actor_id: escalator.id, outcome: 'denied' });
  t.deepEqual(events[0].metadata.permissions_not_held, everything);
  await assertProblem(t, await sendJson('PUT', app.url('/ops/settings/maintenance.message'), { value: 'mine now', reason: 'r' }, headers), 403, 'forbidden');

  await assertProblem(t, await putRole('escalated', { permissions: ['ops.settings.write'], reason: 'a side door' }, headers), 403, 'permission_not_held');
  t.is((await app.db.pool.query(`select 1 from roles where name = 'escalated'`)).rowCount, 0);
  t.is((await deniedEvents('auth.role.change_denied', 'escalated')).length, 1);

  // Bad input is still bad input, whoever sends it.
  await assertProblem(t, await putRole(own.name, { permissions: ['ops.everything'], reason: 'r' }, headers), 422, 'unknown_permission');
  await assertProblem(t, await putRole(own.name, { permissions: 'ops.settings.write', reason: 'r' }, headers), 422, 'validation_failed');
  await assertProblem(t, await putRole(own.name, { permissions: ['x'.repeat(101)], reason: 'r' }, headers), 422, 'validation_failed');
});

test('a caller may add and remove only permissions it holds; the others stay as they were', async (t) => {
  const writer = await accountWithToken(app.db.pool, { permissions: ['ops.roles.write', 'ops.settings.write'] });
  const headers = bearer(writer.token);
  t.is((await putRole('settings_team', { permissions: ['ops.settings.write'], reason: 'they tune limits' }, headers)).status, 201);
  await assertProblem(
    t,
    await putRole('settings_team', { permissions: ['ops.settings.write', 'ops.audit.read'], reason: 'r' }, headers),
    403,
    'permission_not_held',
  );

  t.is((await putRole('audit_team', { permissions: ['ops.audit.read', 'ops.settings.write'], reason: 'made by an admin' })).status, 201);
  const narrowed = await putRole('audit_team', { permissions: ['ops.audit.read'], reason: 'no settings for them' }, headers);
  t.is(narrowed.status, 200);
  await assertProblem(t, await putRole('audit_team', { permissions: [], reason: 'take it all' }, headers), 403, 'permission_not_held');
  const kept = await putRole('audit_team', { permissions: ['ops.audit.read', 'ops.roles.write'], reason: 'they manage roles too' }, headers);
  t.like(await kept.json(), { permissions: ['ops.audit.read', 'ops.roles.write'], version: 3 });
  t.deepEqual((await deniedEvents('auth.role.change_denied', 'audit_team'))[0]?.metadata.permissions_not_held, ['ops.audit.read']);

  // platform_admin holds every permission, so it may change anything.
  t.is((await putRole('audit_team', { permissions: [...PERMISSIONS], reason: 'everything' })).status, 200);
});

test('granting a role is bounded by what the granter holds, to itself and to others: permission_not_held, audited, nothing granted', async (t) => {
  const granter = await accountWithToken(app.db.pool, { permissions: ['ops.roles.write', 'ops.settings.write'] });
  const other = await accountWithToken(app.db.pool);
  const by = { actor: { kind: 'account' as const, id: granter.id, label: granter.email } };
  const grant = (email: string, role: string) => withRoleChange(app.db.pool, recordAuditEvent, (tx) => grantRoleBy(tx, recordAuditEvent, { email, role }, by));
  for (const target of [granter, other]) {
    for (const role of ['platform_admin', 'ops_viewer']) {
      await t.throwsAsync(grant(target.email, role), { code: 'permission_not_held' } as never);
    }
    const denied = await deniedEvents('auth.role.grant_denied', target.id);
    t.deepEqual(
      denied.map((event) => [event.actor_id, event.outcome, event.metadata.role]),
      [
        [granter.id, 'denied', 'platform_admin'],
        [granter.id, 'denied', 'ops_viewer'],
      ],
    );
  }
  t.is(
    (
      await app.db.pool.query(`select 1 from account_roles where account_id = any($1) and role_name in ('platform_admin', 'ops_viewer')`, [
        [granter.id, other.id],
      ])
    ).rowCount,
    0,
  );

  await createRole(app.db.pool, 'settings_writers', ['ops.settings.write']);
  await grant(other.email, 'settings_writers');
  t.like(await roleOf(other.id), { name: 'settings_writers' });
  await waitFor(
    async () =>
      (await sendJson('PUT', app.url('/ops/settings/maintenance.message'), { value: 'granted', reason: 'r' }, bearer(other.token))).status === 200
        ? true
        : undefined,
    2_000,
    'the grant',
  );
});
