import test from 'ava';
import { useInstances } from '../../support/fixture.ts';
import { sendJson } from '../../support/http.ts';
import { assertProblem } from '../../support/problems.ts';
import { accountWithPassword, raiseAddressLimit, signIn } from '../../support/signIn.ts';
import { bearer } from '../../support/tokens.ts';

const app = useInstances(test, { accounts: { admin: { roles: ['platform_admin'] } } });
test.before(() => raiseAddressLimit(app.instance.url, app.accounts.admin.token));

const refresh = (refreshToken: unknown) => sendJson('POST', `${app.instance.url}/auth/token`, { refresh_token: refreshToken });
const me = (token: string) => fetch(`${app.instance.url}/auth/me`, { headers: bearer(token) });

test('a password sign-in returns tokens; /auth/me tells who and how; the event is audited', async (t) => {
  const account = await accountWithPassword(app.db.pool);
  await app.db.pool.query(`insert into account_roles (account_id, role_name) values ($1, 'ops_viewer')`, [account.id]);
  const response = await signIn(app.instance.url, account.email.toUpperCase());
  t.is(response.status, 200);
  const tokens = (await response.json()) as Record<string, unknown>;
  t.is(tokens.token_type, 'Bearer');
  t.is(tokens.expires_in, 900);
  t.regex(String(tokens.refresh_token), /^[A-Za-z0-9_-]{43}$/);
  const who = await me(String(tokens.access_token));
  t.is(who.status, 200);
  t.deepEqual(await who.json(), {
    id: account.id,
    email: account.email,
    roles: ['ops_viewer'],
    // What the console hides or disables by: ops_viewer's `ops.*.read`, spelled out, sorted by name.
    permissions: [
      'ops.accounts.read',
      'ops.audit.read',
      'ops.jobs.read',
      'ops.ratelimits.read',
      'ops.releases.read',
      'ops.roles.read',
      'ops.settings.read',
      'ops.system.read',
    ],
    methods: ['pwd'],
    totp_enabled: false,
  });
  // The refresh token is kept only as a hash.
  const stored = await app.db.pool.query(`select count(*)::int as n from sessions where account_id = $1 and token_hash = sha256($2::bytea)`, [
    account.id,
    Buffer.from(String(tokens.refresh_token)),
  ]);
  t.is(stored.rows[0].n, 1);
  const audit = await app.db.pool.query(`select outcome from audit_events where action = 'auth.sign_in.succeeded' and resource_id = $1`, [account.id]);
  t.deepEqual(audit.rows, [{ outcome: 'success' }]);
  await assertProblem(t, await me('not.a.token'), 401, 'unauthenticated');
});

test('an unknown email and a wrong password get the same answer, and both are audited failures', async (t) => {
  const account = await accountWithPassword(app.db.pool);
  const wrong = await signIn(app.instance.url, account.email, 'not the password');
  const unknown = await signIn(app.instance.url, 'nobody-here@example.com', 'not the password');
  const [wrongBody, unknownBody] = await Promise.all([
    assertProblem(t, wrong, 401, 'invalid_credentials'),
    assertProblem(t, unknown, 401, 'invalid_credentials'),
  ]);
  const strip = ({ request_id: _id, ...rest }: Record<string, unknown>) => rest;
  t.deepEqual(strip(wrongBody), strip(unknownBody));
  const audit = await app.db.pool.query(
    `select actor_kind, metadata->>'reason' as reason from audit_events where action = 'auth.sign_in.failed' and (resource_id = $1 or actor_label = 'nobody-here@example.com') order by occurred_at`,
    [account.id],
  );
  t.deepEqual(audit.rows, [
    { actor_kind: 'account', reason: 'invalid_credentials' },
    { actor_kind: 'anonymous', reason: 'invalid_credentials' },
  ]);
});

test('refresh rotates: the new token works once; presenting a used one revokes the whole family', async (t) => {
  const account = await accountWithPassword(app.db.pool);
  const first = (await (await signIn(app.instance.url, account.email)).json()) as Record<string, string>;
  const second = await refresh(first.refresh_token);
  t.is(second.status, 200);
  const secondTokens = (await second.json()) as Record<string, string>;
  t.not(secondTokens.refresh_token, first.refresh_token);
  t.is((await me(secondTokens.access_token!)).status, 200);
  // The first token again: reuse, so the family goes, including the token issued from it.
  await assertProblem(t, await refresh(first.refresh_token), 401, 'invalid_refresh_token');
  await assertProblem(t, await refresh(secondTokens.refresh_token), 401, 'invalid_refresh_token');
  const sessions = await app.db.pool.query(`select count(*)::int as n from sessions where account_id = $1 and revoked_at is null`, [account.id]);
  t.is(sessions.rows[0].n, 0);
  const audit = await app.db.pool.query(`select outcome from audit_events where action = 'auth.session.reuse_detected' and resource_id = $1`, [account.id]);
  t.deepEqual(audit.rows, [{ outcome: 'denied' }]);
  await assertProblem(t, await refresh('never-issued'), 401, 'invalid_refresh_token');
});

test('concurrent refreshes of one token: exactly one rotates', async (t) => {
  const account = await accountWithPassword(app.db.pool);
  const tokens = (await (await signIn(app.instance.url, account.email)).json()) as Record<string, string>;
  const answers = await Promise.all([refresh(tokens.refresh_token), refresh(tokens.refresh_token), refresh(tokens.refresh_token)]);
  t.deepEqual(answers.map((answer) => answer.status).sort(), [200, 401, 401]);
});

test('sign-out revokes the session of the access token, or of a given refresh token of the same account', async (t) => {
  const account = await accountWithPassword(app.db.pool);
  const tokens = (await (await signIn(app.instance.url, account.email)).json()) as Record<string, string>;
  const out = await sendJson('POST', `${app.instance.url}/auth/sign-out`, {}, bearer(tokens.access_token!));
  t.is(out.status, 204);
  await assertProblem(t, await refresh(tokens.refresh_token), 401, 'invalid_refresh_token');

  const other = (await (await signIn(app.instance.url, account.email)).json()) as Record<string, string>;
  const stranger = await accountWithPassword(app.db.pool);
  const strangerTokens = (await (await signIn(app.instance.url, stranger.email)).json()) as Record<string, string>;
  // Another account's refresh token is not the caller's to revoke.
  await assertProblem(
    t,
    await sendJson('POST', `${app.instance.url}/auth/sign-out`, { refresh_token: strangerTokens.refresh_token }, bearer(other.access_token!)),
    401,
    'invalid_refresh_token',
  );
  t.is((await refresh(strangerTokens.refresh_token)).status, 200);
  t.is((await sendJson('POST', `${app.instance.url}/auth/sign-out`, { refresh_token: other.refresh_token }, bearer(other.access_token!))).status, 204);
  await assertProblem(t, await refresh(other.refresh_token), 401, 'invalid_refresh_token');
  await assertProblem(t, await sendJson('POST', `${app.instance.url}/auth/sign-out`, {}), 401, 'unauthenticated');
  const audit = await app.db.pool.query(`select count(*)::int as n from audit_events where action = 'auth.signed_out' and resource_id = $1`, [account.id]);
  t.is(audit.rows[0].n, 2);
});

test('malformed bodies get the documented problems, never echoing values', async (t) => {
  const url = app.instance.url;
  const post = (path: string, body: string, type = 'application/json') => fetch(`${url}${path}`, { method: 'POST', headers: { 'Content-Type': type }, body });
  for (const path of ['/auth/sign-in', '/auth/sign-in/mfa', '/auth/token']) {
    await assertProblem(t, await post(path, '{"email":'), 400, 'invalid_json');
    await assertProblem(t, await post(path, '{}'), 422, 'validation_failed');
    await assertProblem(t, await post(path, 'email=a', 'application/x-www-form-urlencoded'), 415, 'unsupported_media_type');
    await assertProblem(t, await post(path, JSON.stringify({ email: 'a'.repeat(2_000_000) })), 413, 'request_too_large');
  }
  const cases: Array<[string, unknown]> = [
    ['/auth/sign-in', { email: 'a@example.com' }],
    ['/auth/sign-in', { email: 42, password: 'x' }],
    ['/auth/sign-in', { email: 'a@example.com', password: '' }],
    ['/auth/sign-in', { email: 'a@example.com', password: 'p'.repeat(2000) }],
    ['/auth/sign-in', []],
    ['/auth/sign-in/mfa', { challenge_token: 'x' }],
    ['/auth/sign-in/mfa', { challenge_token: 'x', code: '123456', recovery_code: 'abcd' }],
    ['/auth/sign-in/mfa', { challenge_token: 7, code: '123456' }],
    ['/auth/token', { refresh_token: 5 }],
    ['/auth/token', { refresh_token: 'r'.repeat(500) }],
  ];
  for (const [path, body] of cases) {
    const problem = await assertProblem(t, await sendJson('POST', `${url}${path}`, body), 422, 'validation_failed');
    const errors = problem.errors as Array<{ location: string; message: string }>;
    t.true(errors.length > 0);
    t.false(JSON.stringify(errors).includes('pppp'));
  }
  await assertProblem(t, await sendJson('POST', `${url}/auth/sign-in/mfa`, { challenge_token: 'never-issued', code: '123456' }), 401, 'invalid_challenge');
});
