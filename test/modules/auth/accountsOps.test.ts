import test from 'ava';
import { waitFor } from '../../support/cluster.ts';
import { useInstances } from '../../support/fixture.ts';
import { sendJson } from '../../support/http.ts';
import { assertProblem } from '../../support/problems.ts';
import { accountWithToken, bearer } from '../../support/tokens.ts';

const app = useInstances(test, {
  accounts: {
    admin: { roles: ['platform_admin'] },
    viewer: { roles: ['ops_viewer'] },
    // May lock accounts and change roles, but holds no other permission: it cannot hand out more.
    steward: { permissions: ['ops.accounts.read', 'ops.accounts.write', 'ops.roles.write'] },
    zoe: {},
  },
});

const list = async (query: string, headers = app.headers.viewer) => {
  const response = await fetch(app.url(`/ops/accounts?${query}`), { headers });
  t0(response.status === 200, `GET /ops/accounts?${query} answered ${response.status}`);
  return (await response.json()) as { accounts: any[]; next_cursor?: string };
};
function t0(condition: boolean, message: string): asserts condition {
  if (!condition) {
    throw new Error(message);
  }
}
const post = (path: string, body: unknown, headers = app.headers.admin) => sendJson('POST', app.url(path), body, headers);

test.serial('accounts are listed by address with their roles, filtered by email, role and locked, in pages', async (t) => {
  const all = await list('limit=200');
  t.is(all.accounts.length, 4);
  const emails = all.accounts.map((account) => account.email.toLowerCase());
  t.deepEqual(emails, [...emails].sort());
  const admin = all.accounts.find((account) => account.id === app.accounts.admin.id);
  t.like(admin, { roles: ['platform_admin'], locked: false, locked_at: null });
  const byRole = await list('role=ops_viewer');
  t.deepEqual(
    byRole.accounts.map((account) => account.id),
    [app.accounts.viewer.id],
  );
  const byEmail = await list(`email=${encodeURIComponent(app.accounts.zoe.email.slice(2, 10).toUpperCase())}`);
  t.deepEqual(
    byEmail.accounts.map((account) => account.id),
    [app.accounts.zoe.id],
  );
  const first = await list('limit=2');
  t.is(first.accounts.length, 2);
  const second = await list(`limit=2&cursor=${first.next_cursor}`);
  t.deepEqual(
    [...first.accounts, ...second.accounts].map((account) => account.id),
    all.accounts.slice(0, 4).map((account) => account.id),
  );
  await assertProblem(t, await fetch(app.url('/ops/accounts?locked=maybe'), { headers: app.headers.viewer }), 422, 'validation_failed');
  const other = await accountWithToken(app.db.pool, { permissions: ['ops.system.read'] });
  await assertProblem(t, await fetch(app.url('/ops/accounts'), { headers: bearer(other.token) }), 403, 'forbidden');
});

test.serial('locking an account with a reason ends its access on every request, audited; unlocking restores sign-in', async (t) => {
  const zoe = app.accounts.zoe;
  t.is((await fetch(app.url('/auth/me'), { headers: app.headers.zoe })).status, 200);
  await assertProblem(t, await post(`/ops/accounts/${zoe.id}/lock`, {}), 422, 'validation_failed');
  await assertProblem(t, await post(`/ops/accounts/${zoe.id}/lock`, { reason: 'x' }, app.headers.viewer), 403, 'forbidden');
  await assertProblem(t, await post('/ops/accounts/00000000-0000-4000-8000-000000000000/lock', { reason: 'x' }), 404, 'account_not_found');
  const locked = await post(`/ops/accounts/${zoe.id}/lock`, { reason: 'INC-3: credentials leaked' }, app.headers.steward);
  t.is(locked.status, 200);
  t.like(await locked.json(), { id: zoe.id, locked: true });
  await waitFor(
    async () => ((await fetch(app.url('/auth/me'), { headers: app.headers.zoe })).status === 401 ? true : undefined),
    5_000,
    'the locked token to stop working',
  );
  t.deepEqual(
    (await list('locked=true')).accounts.map((account) => account.id),
    [zoe.id],
  );
  const audit = await app.db.pool.query(`select actor_id, resource_id, metadata->>'reason' as reason from audit_events where action = 'auth.account.locked'`);
  t.deepEqual(audit.rows, [{ actor_id: app.accounts.steward.id, resource_id: zoe.id, reason: 'INC-3: credentials leaked' }]);
  const unlocked = await post(`/ops/accounts/${zoe.id}/unlock`, { reason: 'INC-3: password reset' });
  t.like(await unlocked.json(), { locked: false, locked_at: null });
});

test.serial('roles are granted and taken with a reason, never beyond what the operator holds', async (t) => {
  const zoe = app.accounts.zoe;
  const role = (method: string, name: string, headers = app.headers.admin) =>
    sendJson(method, app.url(`/ops/accounts/${zoe.id}/roles/${name}`), { reason: 'on call this week' }, headers);
  await assertProblem(t, await role('PUT', 'platform_admin', app.headers.steward), 403, 'permission_not_held');
  await assertProblem(t, await role('PUT', 'no_such_role'), 404, 'role_not_found');
  const granted = await role('PUT', 'ops_viewer');
  t.is(granted.status, 200);
  t.deepEqual(((await granted.json()) as any).roles, ['ops_viewer']);
  await assertProblem(t, await role('DELETE', 'ops_viewer', app.headers.steward), 403, 'permission_not_held');
  const revoked = await role('DELETE', 'ops_viewer');
  t.deepEqual(((await revoked.json()) as any).roles, []);
  const audit = await app.db.pool.query(`select action, outcome from audit_events where resource_id = $1 and action like 'auth.role.%' order by id`, [zoe.id]);
  t.deepEqual(
    audit.rows.map((row) => `${row.action}:${row.outcome}`),
    ['auth.role.grant_denied:denied', 'auth.role.granted:success', 'auth.role.revoke_denied:denied', 'auth.role.revoked:success'],
  );
});
