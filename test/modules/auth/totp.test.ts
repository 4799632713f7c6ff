import test from 'ava';
import { useInstances } from '../../support/fixture.ts';
import { sendJson } from '../../support/http.ts';
import { assertProblem } from '../../support/problems.ts';
import { accountWithPassword, accountWithTotp as accountWithTotpOn, codeAt, raiseAddressLimit, signIn } from '../../support/signIn.ts';
import { bearer } from '../../support/tokens.ts';

const app = useInstances(test, { accounts: { admin: { roles: ['platform_admin'] } } });
test.before(() => raiseAddressLimit(app.instance.url, app.accounts.admin.token));

const post = (path: string, token: string, body: unknown = {}) => sendJson('POST', `${app.instance.url}${path}`, body, bearer(token));
const mfa = (body: unknown) => sendJson('POST', `${app.instance.url}/auth/sign-in/mfa`, body);
const tokensOf = async (response: Response) => (await response.json()) as Record<string, string>;

const accountWithTotp = () => accountWithTotpOn(app.db.pool, app.instance.url);

test('TOTP lifecycle: start, confirm with a real code, sign in in two steps, replay refused, turn off', async (t) => {
  const account = await accountWithPassword(app.db.pool);
  const { access_token: token } = await tokensOf(await signIn(app.instance.url, account.email));
  await assertProblem(t, await post('/auth/mfa/totp/confirm', token!, { code: '123456' }), 409, 'mfa_setup_not_started');
  const start = await post('/auth/mfa/totp', token!);
  t.is(start.status, 201);
  const { secret, otpauth_uri: uri } = (await start.json()) as { secret: string; otpauth_uri: string };
  t.regex(uri, /^otpauth:\/\/totp\/Backplane:.+\?.*issuer=Backplane/);
  t.regex(uri, /algorithm=SHA1&digits=6&period=30/);
  // The seed is sealed at rest, bound to the account.
  const stored = await app.db.pool.query(`select sealed_secret from mfa_totp where account_id = $1`, [account.id]);
  t.false(String(stored.rows[0].sealed_secret).includes(secret));
  await assertProblem(t, await post('/auth/mfa/totp/confirm', token!, { code: '000000' === codeAt(secret) ? '111111' : '000000' }), 422, 'invalid_code');
  // Kept: recomputed later, a code could belong to the next time step and be rightly accepted.
  const setupCode = codeAt(secret);
  const confirm = await post('/auth/mfa/totp/confirm', token!, { code: setupCode });
  t.is(confirm.status, 200);
  const { recovery_codes: codes } = (await confirm.json()) as { recovery_codes: string[] };
  t.is(new Set(codes).size, 10);
  await assertProblem(t, await post('/auth/mfa/totp', token!), 409, 'mfa_already_enabled');

  const first = await signIn(app.instance.url, account.email);
  t.is(first.status, 202);
  const challenge = (await first.json()) as { challenge_token: string; methods: string[] };
  t.deepEqual(challenge.methods, ['totp', 'recovery_code']);
  // The code that confirmed setup is spent: its time step is never accepted again.
  await assertProblem(t, await mfa({ challenge_token: challenge.challenge_token, code: setupCode }), 401, 'invalid_mfa');
  const next = codeAt(secret, 1);
  const done = await mfa({ challenge_token: challenge.challenge_token, code: next });
  t.is(done.status, 200);
  const tokens = await tokensOf(done);
  const who = (await (await fetch(`${app.instance.url}/auth/me`, { headers: bearer(tokens.access_token!) })).json()) as Record<string, unknown>;
  t.deepEqual(who.methods, ['pwd', 'otp']);
  t.true(who.totp_enabled);
  // A used challenge does not open again; the same code on a fresh challenge is a replay.
  await assertProblem(t, await mfa({ challenge_token: challenge.challenge_token, code: next }), 401, 'invalid_challenge');
  const again = (await (await signIn(app.instance.url, account.email)).json()) as { challenge_token: string };
  await assertProblem(t, await mfa({ challenge_token: again.challenge_token, code: next }), 401, 'invalid_mfa');
  // The refreshed pair keeps the second factor of the sign-in.
  const refreshed = await tokensOf(await sendJson('POST', `${app.instance.url}/auth/token`, { refresh_token: tokens.refresh_token }));
  const whoAfter = (await (await fetch(`${app.instance.url}/auth/me`, { headers: bearer(refreshed.access_token!) })).json()) as Record<string, unknown>;
  t.deepEqual(whoAfter.methods, ['pwd', 'otp']);

  const off = await sendJson('DELETE', `${app.instance.url}/auth/mfa/totp`, { recovery_code: codes[0] }, bearer(token!));
  t.is(off.status, 204);
  t.is((await signIn(app.instance.url, account.email)).status, 200);
  await assertProblem(t, await sendJson('DELETE', `${app.instance.url}/auth/mfa/totp`, { code: '123456' }, bearer(token!)), 409, 'mfa_not_enabled');
  const audit = await app.db.pool.query(`select action from audit_events where resource_id = $1 and action like 'auth.mfa.%' order by occurred_at`, [
    account.id,
  ]);
  t.deepEqual(
    audit.rows.map((row) => row.action),
    ['auth.mfa.totp.enabled', 'auth.mfa.totp.disabled'],
  );
  const failures = await app.db.pool.query(`select metadata->>'reason' as reason from audit_events where resource_id = $1 and action = 'auth.sign_in.failed'`, [
    account.id,
  ]);
  t.deepEqual(failures.rows, [{ reason: 'invalid_code' }, { reason: 'invalid_code' }]);
});

test('a recovery code signs in once; new codes replace every earlier one', async (t) => {
  const account = await accountWithTotp();
  const challenge = async () => ((await (await signIn(app.instance.url, account.email)).json()) as { challenge_token: string }).challenge_token;
  const code = account.recoveryCodes[3]!;
  const done = await mfa({ challenge_token: await challenge(), recovery_code: code.toUpperCase().replace(/-/g, ' ') });
  t.is(done.status, 200);
  const { access_token: strong } = await tokensOf(done);
  await assertProblem(t, await mfa({ challenge_token: await challenge(), recovery_code: code }), 401, 'invalid_mfa');

  const regenerated = await post('/auth/mfa/recovery-codes', strong!, { recovery_code: account.recoveryCodes[4] });
  t.is(regenerated.status, 200);
  const { recovery_codes: fresh } = (await regenerated.json()) as { recovery_codes: string[] };
  t.is(fresh.length, 10);
  await assertProblem(t, await mfa({ challenge_token: await challenge(), recovery_code: account.recoveryCodes[5] }), 401, 'invalid_mfa');
  t.is((await mfa({ challenge_token: await challenge(), recovery_code: fresh[0] })).status, 200);
  await assertProblem(t, await post('/auth/mfa/recovery-codes', strong!, { recovery_code: 'wrong-code-here' }), 422, 'invalid_code');
  await assertProblem(t, await post('/auth/mfa/recovery-codes', strong!, {}), 422, 'validation_failed');
});

test('ops routes need a second factor: a password-only token gets mfa_required, an otp one passes', async (t) => {
  const account = await accountWithTotp();
  await app.db.pool.query(`insert into account_roles (account_id, role_name) values ($1, 'ops_viewer')`, [account.id]);
  await assertProblem(t, await fetch(`${app.instance.url}/ops/system`, { headers: bearer(account.token) }), 403, 'mfa_required');
  const { challenge_token: challenge } = (await (await signIn(app.instance.url, account.email)).json()) as { challenge_token: string };
  const { access_token: strong } = await tokensOf(await mfa({ challenge_token: challenge, code: codeAt(account.secret, 1) }));
  t.is((await fetch(`${app.instance.url}/ops/system`, { headers: bearer(strong!) })).status, 200);
});

test('two-factor change attempts are limited per account, and a lowered setting applies at once', async (t) => {
  const account = await accountWithTotp(); // confirm spent one attempt
  const other = await accountWithTotp();
  const lowered = await sendJson('PUT', `${app.instance.url}/ops/settings/auth.mfa_change_attempts`, { value: 3, reason: 'tighter' }, app.headers.admin);
  t.is(lowered.status, 200);
  for (let attempt = 0; attempt < 2; attempt += 1) {
    const wrong = await post('/auth/mfa/recovery-codes', account.token, { recovery_code: 'wrong-code-here' });
    await assertProblem(t, wrong, 422, 'invalid_code');
    t.regex(wrong.headers.get('ratelimit-policy') ?? '', /^"auth_mfa";q=3;w=900$/);
  }
  // Over budget even the right code is refused.
  const refused = await post('/auth/mfa/recovery-codes', account.token, { recovery_code: account.recoveryCodes[0] });
  await assertProblem(t, refused, 429, 'too_many_attempts');
  t.true(Number(refused.headers.get('retry-after')) >= 1);
  t.regex(refused.headers.get('ratelimit') ?? '', /^"auth_mfa";r=0;t=\d+$/);
  await assertProblem(
    t,
    await sendJson('DELETE', `${app.instance.url}/auth/mfa/totp`, { recovery_code: account.recoveryCodes[0] }, bearer(account.token)),
    429,
    'too_many_attempts',
  );
  // Another account has its own budget.
  t.is((await post('/auth/mfa/recovery-codes', other.token, { recovery_code: other.recoveryCodes[0] })).status, 200);
  await sendJson('PUT', `${app.instance.url}/ops/settings/auth.mfa_change_attempts`, { value: 10, reason: 'back' }, app.headers.admin);
});
