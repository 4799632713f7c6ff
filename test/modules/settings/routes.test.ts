import test from 'ava';
import { useInstances } from '../../support/fixture.ts';
import { getJson, sendJson } from '../../support/http.ts';
import { assertProblem } from '../../support/problems.ts';
import { accountWithToken, bearer } from '../../support/tokens.ts';

const app = useInstances(test, { accounts: { admin: { roles: ['platform_admin'] }, viewer: { roles: ['ops_viewer'] } } });
const put = (name: string, body: unknown, headers = app.headers.admin) => sendJson('PUT', app.url(`/ops/settings/${name}`), body, headers);
const counts = async (name: string) => {
  const { rows } = await app.db.pool.query(
    `select (select count(*) from settings_history where name = $1)::int as history,
            (select count(*) from audit_events where resource_id = $1)::int as events`,
    [name],
  );
  return rows[0] as { history: number; events: number };
};

test('the list shows every setting with value, default, kind, bounds and version; durations also in seconds', async (t) => {
  const { status, body } = await getJson(app.url('/ops/settings'), app.headers.viewer);
  t.is(status, 200);
  t.is(body.settings.length, 12);
  // Settings no other test of this file changes.
  t.like(
    body.settings.find((s: any) => s.name === 'maintenance.retry_after'),
    {
      kind: 'duration',
      group: 'maintenance',
      value: '5m',
      value_seconds: 300,
      default: '5m',
      default_seconds: 300,
      bounds: { min: '1m', max: '24h', min_seconds: 60, max_seconds: 86_400 },
      modified: false,
      invalid_stored_value: false,
      version: 0,
      updated_at: null,
      updated_by: null,
    },
  );
  t.like(
    body.settings.find((s: any) => s.name === 'auth.ops_require_mfa'),
    { kind: 'boolean', value: true, default: true, bounds: {} },
  );
  t.like(
    body.settings.find((s: any) => s.name === 'maintenance.message'),
    { kind: 'string', value: '', bounds: { max_length: 500 } },
  );
  const grouped = await getJson(app.url('/ops/settings?group=maintenance'), app.headers.viewer);
  t.deepEqual(
    grouped.body.settings.map((s: any) => s.name),
    ['maintenance.enabled', 'maintenance.message', 'maintenance.retry_after'],
  );
});

test('an unknown setting is 404 setting_not_found for read, history and write', async (t) => {
  await assertProblem(t, await fetch(app.url('/ops/settings/no.such'), { headers: app.headers.viewer }), 404, 'setting_not_found');
  await assertProblem(t, await fetch(app.url('/ops/settings/no.such/history'), { headers: app.headers.viewer }), 404, 'setting_not_found');
  await assertProblem(t, await put('no.such', { value: 1, reason: 'why' }), 404, 'setting_not_found');
});

test('reading needs ops.settings.read and writing ops.settings.write', async (t) => {
  const nobody = bearer((await accountWithToken(app.db.pool)).token);
  await assertProblem(t, await fetch(app.url('/ops/settings'), { headers: nobody }), 403, 'forbidden');
  await assertProblem(t, await put('auth.login_attempts', { value: 20, reason: 'r' }, app.headers.viewer), 403, 'forbidden');
  await assertProblem(t, await put('auth.login_attempts', { value: 20, reason: 'r' }, {}), 401, 'unauthenticated');
  t.is((await counts('auth.login_attempts')).history, 0);
});

test.serial('a change is versioned, kept in history and audited with the client address and user agent', async (t) => {
  const response = await put('auth.login_window', { value: '1h30m', reason: 'incident 42' }, { ...app.headers.admin, 'User-Agent': 'ops-script/1.0' });
  t.is(response.status, 200);
  const body = (await response.json()) as any;
  t.like(body, { value: '1h30m', value_seconds: 5400, modified: true, version: 1 });
  t.truthy(body.updated_at);
  t.regex(body.updated_by, /@example\.com$/);

  const again = await put('auth.login_window', { value: '20m', reason: 'calmer', version: 1 });
  t.like(await again.json(), { value: '20m', version: 2 });

  const history = await getJson(app.url('/ops/settings/auth.login_window/history'), app.headers.viewer);
  t.deepEqual(
    history.body.changes.map((c: any) => [c.old_value, c.new_value, c.version, c.reason]),
    [
      ['1h30m', '20m', 2, 'calmer'],
      ['15m', '1h30m', 1, 'incident 42'],
    ],
  );
  t.is(history.body.changes[0].actor.kind, 'account');

  const { rows } = await app.db.pool.query(
    `select actor_kind, actor_label, outcome, host(client_ip) as ip, user_agent, request_id, metadata
     from audit_events where action = 'settings.value.changed' and resource_type = 'setting' and resource_id = 'auth.login_window' order by id`,
  );
  t.is(rows.length, 2);
  t.like(rows[0], { actor_kind: 'account', outcome: 'success', ip: '127.0.0.1', user_agent: 'ops-script/1.0' });
  t.like(rows[0].metadata, { old_value: '15m', new_value: '1h30m', reason: 'incident 42', version: 1 });
  t.is(rows[0].request_id, response.headers.get('x-request-id'));
});

test.serial('a write that changes nothing creates no version, history or audit event', async (t) => {
  const before = await counts('auth.mfa_change_attempts');
  const same = await put('auth.mfa_change_attempts', { value: 10, reason: 'already the default' });
  t.like(await same.json(), { value: 10, version: 0, modified: false });
  t.deepEqual(await counts('auth.mfa_change_attempts'), before);

  t.is((await put('auth.mfa_change_attempts', { value: 12, reason: 'raise' })).status, 200);
  const repeated = await put('auth.mfa_change_attempts', { value: 12, reason: 'raise again', version: 1 });
  t.like(await repeated.json(), { value: 12, version: 1 });
  t.deepEqual(await counts('auth.mfa_change_attempts'), { history: before.history + 1, events: before.events + 1 });
});

test('every change needs a reason: 422 setting_reason_required', async (t) => {
  for (const body of [{ value: 20 }, { value: 20, reason: '' }, { value: 20, reason: '   ' }]) {
    const problem = await assertProblem(t, await put('auth.login_attempts', body), 422, 'setting_reason_required');
    t.is((problem.errors as any[])[0].location, 'body.reason');
  }
  await assertProblem(t, await put('auth.login_attempts', { value: 20, reason: 'x'.repeat(501) }), 422, 'validation_failed');
  await assertProblem(t, await put('auth.login_attempts', { value: 20, reason: 7 }), 422, 'validation_failed');
  t.is((await counts('auth.login_attempts')).history, 0);
});

test('a value out of bounds or of the wrong kind is 422 invalid_setting_value naming the bound, not the value', async (t) => {
  const cases: Array<[string, unknown]> = [
    ['auth.login_attempts', 2],
    ['auth.login_attempts', 101],
    ['auth.login_attempts', '20'],
    ['auth.login_attempts', 20.5],
    ['auth.ip_requests_per_minute', 10_001],
    ['auth.login_window', '30s'],
    ['auth.login_window', 900],
    ['auth.login_window', 'fifteen minutes'],
    ['audit.retention', '87601h'],
    ['releases.instance_retention', '23h59m'],
    ['maintenance.enabled', 'yes'],
    ['maintenance.message', 'm'.repeat(501)],
    ['maintenance.message', 42],
    ['maintenance.retry_after', '25h'],
    ['auth.ops_require_mfa', null],
  ];
  for (const [name, value] of cases) {
    const response = await put(name, { value, reason: 'testing bounds' });
    const problem = await assertProblem(t, response, 422, 'invalid_setting_value');
    t.deepEqual(
      (problem.errors as any[]).map((e) => e.location),
      ['body.value'],
      name,
    );
    t.regex(String(problem.detail), /from|true or false|at most/, name);
    if (typeof value === 'string') {
      // The request id is random hex, so only what describes the error is searched.
      t.false(JSON.stringify([problem.title, problem.detail, problem.errors]).includes(value), `${name} echoes its value`);
    }
  }
  t.is((await counts('maintenance.retry_after')).history, 0);
  const missing = await assertProblem(t, await put('auth.login_attempts', { reason: 'no value' }), 422, 'validation_failed');
  t.deepEqual(
    (missing.errors as any[]).map((e) => e.location),
    ['body.value'],
  );
});

test.serial("audit.retention accepts 87600h (the seed's maximum) and refuses 87601h", async (t) => {
  const accepted = await put('audit.retention', { value: '87600h', reason: 'keep ten years' });
  t.is(accepted.status, 200);
  t.like(await accepted.json(), { value: '87600h', value_seconds: 315_360_000 });
  await assertProblem(t, await put('audit.retention', { value: '87601h', reason: 'too long' }), 422, 'invalid_setting_value');
  t.like((await getJson(app.url('/ops/settings/audit.retention'), app.headers.viewer)).body, { value: '87600h', version: 1 });
});

test.serial('a stale version is 409 setting_version_conflict and changes nothing', async (t) => {
  t.is((await put('ops.history_retention', { value: '720h', reason: 'first', version: 0 })).status, 200);
  await assertProblem(t, await put('ops.history_retention', { value: '800h', reason: 'stale', version: 0 }), 409, 'setting_version_conflict');
  await assertProblem(t, await put('ops.history_retention', { value: '800h', reason: 'future', version: 7 }), 409, 'setting_version_conflict');
  t.like((await getJson(app.url('/ops/settings/ops.history_retention'), app.headers.viewer)).body, { value: '720h', version: 1 });
  t.is((await counts('ops.history_retention')).history, 1);
});

test.serial('malformed requests are problems, not crashes', async (t) => {
  const raw = (body: string, type = 'application/json') =>
    fetch(app.url('/ops/settings/auth.login_attempts'), { method: 'PUT', headers: { ...app.headers.admin, 'Content-Type': type }, body });
  await assertProblem(t, await raw('{"value": 5,'), 400, 'invalid_json');
  await assertProblem(t, await raw('value=5', 'application/x-www-form-urlencoded'), 415, 'unsupported_media_type');
  await assertProblem(t, await put('auth.login_attempts', { value: 5, reason: 'r', version: -1 }), 422, 'validation_failed');
  await assertProblem(t, await put('auth.login_attempts', { value: 5, reason: 'r', version: 'one' }), 422, 'validation_failed');
  await assertProblem(t, await fetch(app.url(`/ops/settings/${'a'.repeat(201)}`), { headers: app.headers.viewer }), 422, 'validation_failed');
  await assertProblem(t, await fetch(app.url('/ops/settings/auth.login_window/history?limit=0'), { headers: app.headers.viewer }), 422, 'validation_failed');
  await assertProblem(t, await fetch(app.url('/ops/settings/auth.login_window/history?before=abc'), { headers: app.headers.viewer }), 422, 'validation_failed');
});

test.serial('history pages newest first with a cursor', async (t) => {
  for (const value of [11, 12, 13, 14, 15]) {
    t.is((await put('auth.ip_requests_per_minute', { value: value * 10, reason: `step ${value}` })).status, 200);
  }
  const seen: number[] = [];
  let cursor: string | undefined;
  do {
    const page = await getJson(app.url(`/ops/settings/auth.ip_requests_per_minute/history?limit=2${cursor ? `&before=${cursor}` : ''}`), app.headers.viewer);
    seen.push(...page.body.changes.map((c: any) => c.version));
    cursor = page.body.next_cursor;
  } while (cursor);
  t.deepEqual(seen, [5, 4, 3, 2, 1]);
});

test.serial('a stored value the declaration no longer accepts falls back to the default, flagged', async (t) => {
  await app.db.pool.query(
    `insert into settings_values (name, value, version, updated_by_kind, updated_by_id, updated_by)
     values ('releases.instance_retention', '"1h"', 1, 'system', 'test', 'test')`,
  );
  const entry = await waitForVersion('releases.instance_retention', 1);
  t.like(entry, { value: '2160h', invalid_stored_value: true, modified: false });
  const fixed = await put('releases.instance_retention', { value: '2160h', reason: 'repair the stored value' });
  t.like(await fixed.json(), { value: '2160h', version: 2, invalid_stored_value: false });
});

async function waitForVersion(name: string, version: number): Promise<any> {
  for (let i = 0; i < 100; i += 1) {
    const { body } = await getJson(app.url(`/ops/settings/${name}`), app.headers.viewer);
    if (body.version === version) {
      return body;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`${name} never reached version ${version}`);
}
