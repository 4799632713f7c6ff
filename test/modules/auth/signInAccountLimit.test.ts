import test, { type ExecutionContext } from 'ava';
import { useInstances } from '../../support/fixture.ts';
import { sendJson } from '../../support/http.ts';
import { assertProblem } from '../../support/problems.ts';
import { PASSWORD, accountWithPassword, accountWithTotp, codeAt, raiseAddressLimit, wrongCodeFor } from '../../support/signIn.ts';

const ADDRESS_ATTEMPTS = 50; // the default of auth.login_address_attempts
const CHALLENGE_ATTEMPTS = 5;

// Behind a trusted proxy on 127.0.0.1, so each request names its client network; decisions get time to reach the database,
// and a 24-hour window gives a budget back only every 29 minutes, so a slow run never sees one come back.
const app = useInstances(test, {
  count: 2,
  env: { APP_TRUSTED_PROXIES: '127.0.0.1/32' },
  options: { rateLimitTimeoutMs: 10_000 },
  accounts: { admin: { roles: ['platform_admin'] } },
  seed: async (db) => {
    await db.pool.query(
      `insert into settings_values (name, value, version, updated_by_kind, updated_by_id, updated_by) values ('auth.login_window', '"24h"', 1, 'system', 'test', 'test')`,
    );
  },
});
const WINDOW = 24 * 3600;
test.before(() => raiseAddressLimit(app.instance.url, app.accounts.admin.token));

let networks = 0;
/** A client in an IPv6 /64 no other request of this file came from. */
const freshNetwork = () => `2001:db8:${(networks += 1).toString(16)}:${networks.toString(16)}::1`;
const from = (client: string) => ({ 'X-Forwarded-For': client });
const instanceUrl = (index: number) => app.instances[index % app.instances.length]!.url;

const signInFrom = (client: string, email: string, password = PASSWORD, index = 0) =>
  sendJson('POST', `${instanceUrl(index)}/auth/sign-in`, { email, password }, from(client));
const mfaFrom = (client: string, body: Record<string, unknown>, index = 0) => sendJson('POST', `${instanceUrl(index)}/auth/sign-in/mfa`, body, from(client));
const setAddressAttempts = (value: number) =>
  sendJson('PUT', `${app.instance.url}/ops/settings/auth.login_address_attempts`, { value, reason: 'test' }, app.headers.admin);

/** A fresh challenge of an account with TOTP on, from a network of its own. */
async function challengeOf(email: string): Promise<string> {
  const answer = await signInFrom(freshNetwork(), email);
  if (answer.status !== 202) {
    throw new Error(`sign-in answered ${answer.status}, not a challenge`);
  }
  return ((await answer.json()) as { challenge_token: string }).challenge_token;
}

const challengeAttempts = async (accountId: string) =>
  (await app.db.pool.query<{ attempts: number }>(`select attempts from mfa_challenges where account_id = $1 order by created_at`, [accountId])).rows.map(
    (row) => row.attempts,
  );

/** Sends `count` requests, a few at a time: argon2 for dozens at once would pass the request deadline on a loaded machine. */
async function inTurns(count: number, send: (index: number) => Promise<Response>): Promise<Response[]> {
  const answers: Response[] = [];
  for (let first = 0; first < count; first += 4) {
    answers.push(...(await Promise.all(Array.from({ length: Math.min(4, count - first) }, (_, offset) => send(first + offset)))));
  }
  return answers;
}

const sessionsOf = async (accountId: string) => (await app.db.pool.query(`select 1 from sessions where account_id = $1`, [accountId])).rowCount;

async function assertTooManyForEmail(t: ExecutionContext, answer: Response) {
  t.true(Number(answer.headers.get('retry-after')) >= 1);
  t.is(answer.headers.get('ratelimit-policy'), `"auth_login_address";q=${ADDRESS_ATTEMPTS};w=${WINDOW}`);
  await assertProblem(t, answer, 429, 'too_many_attempts');
}

test.serial('120 wrong passwords for one email from 60 IPv6 /64s: auth.login_address_attempts are checked, the rest 429', async (t) => {
  const account = await accountWithPassword(app.db.pool);
  const clients = Array.from({ length: 60 }, freshNetwork);
  const answers = await inTurns(120, (index) => signInFrom(clients[index % 60]!, account.email, `wrong ${index}`, index));
  const checked = answers.filter((answer) => answer.status === 401);
  const refused = answers.filter((answer) => answer.status === 429);
  t.is(checked.length, ADDRESS_ATTEMPTS);
  t.is(refused.length, 120 - ADDRESS_ATTEMPTS);
  for (const answer of checked) {
    // Admitted by both limits: the per-network one first, then the email's.
    t.is(answer.headers.get('ratelimit-policy'), `"auth_login";q=10;w=${WINDOW}, "auth_login_address";q=${ADDRESS_ATTEMPTS};w=${WINDOW}`);
    await assertProblem(t, answer, 401, 'invalid_credentials');
  }
  for (const answer of refused) {
    await assertTooManyForEmail(t, answer);
  }
  // The owner, from a network never seen, is locked out of password sign-in for the window too (ADR 0065).
  await assertTooManyForEmail(t, await signInFrom(freshNetwork(), account.email));
  // Refused attempts never reached the password check: only the budget's were audited as wrong.
  const audit = await app.db.pool.query(
    `select metadata->>'reason' as reason, count(*)::int as n from audit_events
     where action = 'auth.sign_in.failed' and actor_label = $1 group by 1 order by 1`,
    [account.email],
  );
  t.deepEqual(audit.rows, [
    { reason: 'invalid_credentials', n: ADDRESS_ATTEMPTS },
    { reason: 'rate_limited', n: 120 - ADDRESS_ATTEMPTS + 1 },
  ]);
  // Malformed input is still answered for what it is, before any budget.
  await assertProblem(t, await sendJson('POST', app.url('/auth/sign-in'), { email: account.email }, from(freshNetwork())), 422, 'validation_failed');
  await assertProblem(t, await signInFrom(freshNetwork(), `${account.email}\u200b`), 422, 'invalid_email');
  // Another email keeps its own budget.
  const other = await accountWithPassword(app.db.pool);
  t.is((await signInFrom(clients[0]!, other.email)).status, 200);
});

test.serial('an attempt refused per network spends nothing of the email budget', async (t) => {
  const account = await accountWithPassword(app.db.pool);
  const client = freshNetwork();
  const answers = await inTurns(30, (index) => signInFrom(client, account.email, 'wrong', index));
  t.deepEqual(answers.map((answer) => answer.status).sort(), [...Array(10).fill(401), ...Array(20).fill(429)]);
  for (const answer of answers.filter((refused) => refused.status === 429)) {
    t.is(answer.headers.get('ratelimit-policy'), `"auth_login";q=10;w=${WINDOW}`);
  }
  // From another network: the email's budget lost the 10 checked attempts and this one, nothing for the 20 refused.
  const next = await signInFrom(freshNetwork(), account.email);
  t.is(next.status, 200);
  t.regex(next.headers.get('ratelimit') ?? '', new RegExp(`"auth_login_address";r=${ADDRESS_ATTEMPTS - 11}(;|$)`));
});

test.serial('every spelling that finds the account spends its one budget across networks', async (t) => {
  const account = await accountWithPassword(app.db.pool);
  const fullWidth = (text: string) => text.replace(/[\x21-\x7e]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 0xfee0));
  const spellings = [account.email, account.email.toUpperCase(), fullWidth(account.email), `${account.email}.`, `  ${account.email}\u00a0`];
  const answers = await inTurns(ADDRESS_ATTEMPTS, (index) => signInFrom(freshNetwork(), spellings[index % spellings.length]!, 'wrong', index));
  t.deepEqual(new Set(answers.map((answer) => answer.status)), new Set([401]));
  for (const spelling of spellings) {
    await assertTooManyForEmail(t, await signInFrom(freshNetwork(), spelling));
  }
});

test.serial('second-factor attempts spend the email budget; a refused one spends nothing of its challenge', async (t) => {
  const account = await accountWithTotp(app.db.pool, app.instance.url); // one password attempt
  const challenge = await challengeOf(account.email); // two
  for (let attempt = 0; attempt < 4; attempt += 1) {
    await assertProblem(t, await mfaFrom(freshNetwork(), { challenge_token: challenge, code: wrongCodeFor(account.secret) }, attempt), 401, 'invalid_mfa');
  }
  const passwords = await inTurns(ADDRESS_ATTEMPTS - 6, (index) => signInFrom(freshNetwork(), account.email, 'wrong', index));
  t.deepEqual(new Set(passwords.map((answer) => answer.status)), new Set([401]));
  // The budget is spent: the right code, on a challenge with an attempt left, is refused.
  await assertTooManyForEmail(t, await mfaFrom(freshNetwork(), { challenge_token: challenge, code: codeAt(account.secret, 1) }));
  t.deepEqual(await challengeAttempts(account.id), [4]);
  t.is(await sessionsOf(account.id), 1, 'only the sign-in that turned TOTP on');
});

test.serial('a challenge allows 5 second-factor attempts, even concurrent on two instances; the 6th with the right code is refused', async (t) => {
  const account = await accountWithTotp(app.db.pool, app.instance.url);
  const challenge = await challengeOf(account.email);
  const wrong = wrongCodeFor(account.secret);
  const answers = await Promise.all(Array.from({ length: 12 }, (_, index) => mfaFrom(freshNetwork(), { challenge_token: challenge, code: wrong }, index)));
  const checked = answers.filter((answer) => answer.status === 401);
  t.is(checked.length, 12);
  const codes = await Promise.all(answers.map(async (answer) => ((await answer.json()) as { code: string }).code));
  t.is(codes.filter((code) => code === 'invalid_mfa').length, CHALLENGE_ATTEMPTS);
  t.is(codes.filter((code) => code === 'invalid_challenge').length, 12 - CHALLENGE_ATTEMPTS);
  await assertProblem(t, await mfaFrom(freshNetwork(), { challenge_token: challenge, code: codeAt(account.secret, 1) }), 401, 'invalid_challenge');
  await assertProblem(t, await mfaFrom(freshNetwork(), { challenge_token: challenge, recovery_code: account.recoveryCodes[0] }, 1), 401, 'invalid_challenge');
  t.deepEqual(await challengeAttempts(account.id), [CHALLENGE_ATTEMPTS]);
  t.is(await sessionsOf(account.id), 1, 'no tokens from the dead challenge');
  // Signing in again gives a fresh challenge, which the right code finishes.
  const fresh = await challengeOf(account.email);
  t.is((await mfaFrom(freshNetwork(), { challenge_token: fresh, code: codeAt(account.secret, 1) })).status, 200);
});

test.serial('a challenge dies 5 minutes after it was issued, by the database clock', async (t) => {
  const account = await accountWithTotp(app.db.pool, app.instance.url);
  const challenge = await challengeOf(account.email);
  const lifetime = await app.db.pool.query(`select extract(epoch from expires_at - created_at)::int as seconds from mfa_challenges where account_id = $1`, [
    account.id,
  ]);
  t.is(lifetime.rows[0].seconds, 300);
  // Issued 5 minutes and a second ago, as far as the database can tell.
  await app.db.pool.query(
    `update mfa_challenges set created_at = created_at - interval '301 seconds', expires_at = expires_at - interval '301 seconds' where account_id = $1`,
    [account.id],
  );
  await assertProblem(t, await mfaFrom(freshNetwork(), { challenge_token: challenge, code: codeAt(account.secret, 1) }), 401, 'invalid_challenge');
  t.deepEqual(await challengeAttempts(account.id), [0]);
  // One issued 4 minutes ago still works.
  const recent = await challengeOf(account.email);
  await app.db.pool.query(
    `update mfa_challenges set created_at = created_at - interval '240 seconds', expires_at = expires_at - interval '240 seconds' where account_id = $1 and attempts = 0 and used_at is null and expires_at > now()`,
    [account.id],
  );
  t.is((await mfaFrom(freshNetwork(), { challenge_token: recent, code: codeAt(account.secret, 1) })).status, 200);
});

test.serial('auth.login_address_attempts takes 10 to 1000', async (t) => {
  for (const value of [9, 1001]) {
    await assertProblem(t, await setAddressAttempts(value), 422, 'invalid_setting_value');
  }
  for (const value of [10, 1000, ADDRESS_ATTEMPTS]) {
    t.is((await setAddressAttempts(value)).status, 200, String(value));
  }
});
