import test from 'ava';
import { DEFAULT_MAINTENANCE_MESSAGE, isOpenDuringMaintenance } from '../../../src/modules/maintenance/index.ts';
import { useInstances } from '../../support/fixture.ts';
import { sendJson } from '../../support/http.ts';
import { assertProblem } from '../../support/problems.ts';
import { accountWithPassword, signIn } from '../../support/signIn.ts';

const app = useInstances(test, { accounts: { admin: { roles: ['platform_admin'] } } });

const setting = (name: string, value: unknown, reason = 'planned upgrade') =>
  sendJson('PUT', app.url(`/ops/settings/${name}`), { value, reason }, app.headers.admin);

// Paths served during maintenance, each with what it answers then.
const OPEN: Array<[string, string, number]> = [
  ['GET', '/livez', 200],
  ['GET', '/readyz', 200],
  ['GET', '/readyz?verbose', 200],
  ['GET', '/openapi.json', 200],
  ['GET', '/docs', 200],
  ['GET', '/console', 200],
  ['GET', '/console/console.js', 200],
  ['GET', '/.well-known/jwks.json', 200],
  ['GET', '/ops/system', 200],
  ['GET', '/ops/settings', 200],
  ['GET', '/ops/audit', 200],
  ['GET', '/ops/roles', 200],
  ['GET', '/ops/releases/instances', 200],
  // Sign-in routes are never held by maintenance: an empty body reaches validation.
  ['POST', '/auth/sign-in', 422],
  ['POST', '/auth/sign-in/mfa', 422],
  ['POST', '/auth/token', 422],
  ['POST', '/auth/sign-out', 401],
  ['GET', '/auth/me', 401],
];

const call = (method: string, path: string) =>
  fetch(app.url(path), {
    method,
    headers: path.startsWith('/ops/') ? app.headers.admin : method === 'POST' ? { 'Content-Type': 'application/json' } : {},
    ...(method === 'POST' ? { body: '{}' } : {}),
  });

test.serial('switched on through PUT /ops/settings: 503 maintenance with the message and Retry-After; open routes still served', async (t) => {
  t.is((await setting('maintenance.message', 'Back at 14:00 UTC.')).status, 200);
  t.is((await setting('maintenance.retry_after', '2m')).status, 200);
  t.is((await setting('maintenance.enabled', true)).status, 200);

  for (const [method, path] of [
    ['GET', '/products'],
    ['POST', '/products'],
    ['DELETE', '/orders/7'],
    ['GET', '/auth/sign-in'],
    ['POST', '/auth/me'],
    ['GET', '/ops'],
    ['GET', '/'],
  ]) {
    const response = await call(method!, path!);
    const problem = await assertProblem(t, response, 503, 'maintenance');
    t.is(problem.detail, 'Back at 14:00 UTC.', path);
    t.is(response.headers.get('retry-after'), '120', path);
  }
  for (const [method, path, status] of OPEN) {
    t.is((await call(method, path)).status, status, `${method} ${path}`);
  }
});

test.serial('an empty message gives the default sentence; Retry-After follows the setting', async (t) => {
  t.is((await setting('maintenance.message', '')).status, 200);
  t.is((await setting('maintenance.retry_after', '1h30m')).status, 200);
  const response = await fetch(app.url('/products'));
  const problem = await assertProblem(t, response, 503, 'maintenance');
  t.is(problem.detail, DEFAULT_MAINTENANCE_MESSAGE);
  t.is(response.headers.get('retry-after'), '5400');
});

test.serial('switching needs a reason; switched off, routes answer as before', async (t) => {
  await assertProblem(
    t,
    await sendJson('PUT', app.url('/ops/settings/maintenance.enabled'), { value: false }, app.headers.admin),
    422,
    'setting_reason_required',
  );
  t.is((await fetch(app.url('/products'))).status, 503);
  t.is((await setting('maintenance.enabled', false, 'upgrade done')).status, 200);
  await assertProblem(t, await fetch(app.url('/products')), 404, 'not_found');
  const { rows } = await app.db.pool.query(
    `select metadata->>'new_value' as value from audit_events where action = 'settings.value.changed' and resource_id = 'maintenance.enabled' order by id`,
  );
  t.deepEqual(
    rows.map((row) => row.value),
    ['true', 'false'],
  );
});

test.serial('a sign-out during maintenance ends the session: a refused one would leave it alive', async (t) => {
  const account = await accountWithPassword(app.db.pool);
  const { access_token: token, refresh_token: refresh } = (await (await signIn(app.url(''), account.email)).json()) as {
    access_token: string;
    refresh_token: string;
  };
  t.is((await setting('maintenance.enabled', true)).status, 200);
  try {
    t.is((await sendJson('POST', app.url('/auth/sign-out'), { refresh_token: refresh }, { Authorization: `Bearer ${token}` })).status, 204);
    await assertProblem(t, await sendJson('POST', app.url('/auth/token'), { refresh_token: refresh }), 401, 'invalid_refresh_token');
  } finally {
    t.is((await setting('maintenance.enabled', false, 'test done')).status, 200);
  }
});

test('open paths are matched as the router matches them, and nothing more', (t) => {
  for (const [method, path] of [
    ['GET', '/LIVEZ'],
    ['GET', '/readyz/'],
    ['GET', '/Ops/Settings'],
    ['HEAD', '/livez'],
    ['POST', '/auth/sign-in/'],
    ['GET', '/.well-known/anything'],
  ]) {
    t.true(isOpenDuringMaintenance(method!, path!), `${method} ${path}`);
  }
  for (const [method, path] of [
    ['GET', '/ops'],
    ['GET', '/opsx/system'],
    ['GET', '/livez2'],
    ['GET', '/auth/sign-in'],
    ['POST', '/auth/sign-in/other'],
    ['PUT', '/auth/token'],
    ['GET', '/docs/x'],
    ['GET', '/well-known/x'],
  ]) {
    t.false(isOpenDuringMaintenance(method!, path!), `${method} ${path}`);
  }
});
