import { randomUUID } from 'node:crypto';
import test, { type ExecutionContext } from 'ava';
import { SignJWT } from 'jose';
import { ISSUER } from '../../../src/modules/auth/accessTokens.ts';
import { bearerIdentifier as identifyCaller } from '../../../src/modules/auth/index.ts';
import { issueCliToken, setAccountLockedByEmail } from '../../../src/modules/auth/service.ts';
import { ALGORITHM, loadSigningKey } from '../../../src/modules/auth/signingKeys.ts';
import { waitFor } from '../../support/cluster.ts';
import { useInstances } from '../../support/fixture.ts';
import { sendJson } from '../../support/http.ts';
import { startTestInstance } from '../../support/instance.ts';
import { assertProblem } from '../../support/problems.ts';
import { accountWithPassword, raiseAddressLimit, signIn } from '../../support/signIn.ts';
import { accountWithToken, bearer, testBox } from '../../support/tokens.ts';

// Generous: NOTIFY takes well under a second; a loaded test machine may take much longer.
const EVENTUALLY_MS = 10_000;

const app = useInstances(test, { count: 3, accounts: { admin: { roles: ['platform_admin'] } } });
test.before(() => raiseAddressLimit(app.instance.url, app.accounts.admin.token));

interface Tokens {
  access_token: string;
  refresh_token: string;
}

const signedIn = async (email: string): Promise<Tokens> => {
  const answer = await signIn(app.instance.url, email);
  if (answer.status !== 200) {
    throw new Error(`sign-in answered ${answer.status}`);
  }
  return (await answer.json()) as Tokens;
};
const me = (url: string, token: string) => fetch(`${url}/auth/me`, { headers: bearer(token) });
const startTotp = (url: string, token: string) => sendJson('POST', `${url}/auth/mfa/totp`, {}, bearer(token));

/** Waits until every instance refuses the token on /auth/me and POST /auth/mfa/totp; no answer is ever a 500. */
async function refusedEverywhere(t: ExecutionContext, token: string, what: string): Promise<void> {
  const seen = new Set<number>();
  for (const instance of app.instances) {
    await waitFor(
      async () => {
        const [who, totp] = await Promise.all([me(instance.url, token), startTotp(instance.url, token)]);
        seen.add(who.status).add(totp.status);
        await Promise.all([who.body?.cancel(), totp.body?.cancel()]);
        return who.status === 401 && totp.status === 401 ? true : undefined;
      },
      EVENTUALLY_MS,
      `${what} refused by ${instance.url}`,
    );
    await assertProblem(t, await me(instance.url, token), 401, 'unauthenticated');
    await assertProblem(t, await startTotp(instance.url, token), 401, 'unauthenticated');
  }
  t.false(seen.has(500), `statuses seen: ${[...seen].join(', ')}`);
}

test.serial('a deleted account: its session and token-issue tokens are refused on every instance, never a 500', async (t) => {
  const account = await accountWithPassword(app.db.pool);
  const session = await signedIn(account.email);
  const cli = await accountWithToken(app.db.pool);
  for (const instance of app.instances) {
    t.is((await me(instance.url, session.access_token)).status, 200);
    t.is((await me(instance.url, cli.token)).status, 200);
  }
  await app.db.pool.query(`delete from accounts where id = any($1::uuid[])`, [[account.id, cli.id]]);
  await refusedEverywhere(t, session.access_token, 'the deleted account session token');
  await refusedEverywhere(t, cli.token, 'the deleted account token-issue token');
});

test.serial('a locked account is refused everywhere and cannot sign in; unlocked, a new sign-in works again', async (t) => {
  const account = await accountWithPassword(app.db.pool);
  const session = await signedIn(account.email);
  await setAccountLockedByEmail(app.db.pool, account.email, true);
  await refusedEverywhere(t, session.access_token, 'the locked account token');
  await assertProblem(t, await signIn(app.instance.url, account.email), 403, 'account_locked');
  await assertProblem(t, await sendJson('POST', `${app.instance.url}/auth/token`, { refresh_token: session.refresh_token }), 401, 'invalid_refresh_token');
  await setAccountLockedByEmail(app.db.pool, account.email, false);
  // No clock is compared: a sign-in right after the unlock works at once.
  const again = await signedIn(account.email);
  for (const instance of app.instances) {
    t.is((await me(instance.url, again.access_token)).status, 200);
    await assertProblem(t, await me(instance.url, session.access_token), 401, 'unauthenticated');
  }
});

test.serial('sign-out ends that session on every instance; another session of the account still works', async (t) => {
  const account = await accountWithPassword(app.db.pool);
  const first = await signedIn(account.email);
  const second = await signedIn(account.email);
  t.is((await sendJson('POST', `${app.instances[1]!.url}/auth/sign-out`, {}, bearer(first.access_token))).status, 204);
  await refusedEverywhere(t, first.access_token, 'the signed-out token');
  for (const instance of app.instances) {
    t.is((await me(instance.url, second.access_token)).status, 200);
  }
  // The provider-linking check of a bearer token reads the session itself.
  const identify = identifyCaller(app.db.pool, await loadSigningKey(app.db.pool, undefined, testBox));
  await t.throwsAsync(identify(`Bearer ${first.access_token}`), { message: /ended/ });
  t.is((await identify(`bearer ${second.access_token}`)).id, account.id);
});

test.serial('refresh-token reuse revokes the family: its access tokens are refused everywhere', async (t) => {
  const account = await accountWithPassword(app.db.pool);
  const first = await signedIn(account.email);
  const rotated = (await (await sendJson('POST', `${app.instance.url}/auth/token`, { refresh_token: first.refresh_token })).json()) as Tokens;
  t.is((await me(app.instances[2]!.url, rotated.access_token)).status, 200);
  await assertProblem(t, await sendJson('POST', `${app.instance.url}/auth/token`, { refresh_token: first.refresh_token }), 401, 'invalid_refresh_token');
  await refusedEverywhere(t, rotated.access_token, 'the reused family token');
  await refusedEverywhere(t, first.access_token, 'the first token of the family');
});

test.serial('an instance started after a sign-out refuses that token at once', async (t) => {
  const account = await accountWithPassword(app.db.pool);
  const session = await signedIn(account.email);
  t.is((await sendJson('POST', `${app.instance.url}/auth/sign-out`, {}, bearer(session.access_token))).status, 204);
  const late = await startTestInstance(app.db.url);
  try {
    await assertProblem(t, await me(late.url, session.access_token), 401, 'unauthenticated');
  } finally {
    await late.drain();
  }
});

test('a token of an account deleted in the last second gets 401 from the store, not a 500', async (t) => {
  const account = await accountWithToken(app.db.pool);
  // Deleted without its notification, as if the request came inside the second before it arrives.
  const client = await app.db.pool.connect();
  try {
    await client.query('begin');
    await client.query('alter table accounts disable trigger accounts_deleted');
    await client.query('delete from accounts where id = $1', [account.id]);
    await client.query('alter table accounts enable trigger accounts_deleted');
    await client.query('commit');
  } finally {
    client.release();
  }
  await assertProblem(t, await startTotp(app.instance.url, account.token), 401, 'unauthenticated');
  await assertProblem(t, await me(app.instance.url, account.token), 401, 'unauthenticated');
});

const refresh = (url: string, refreshToken: string) => sendJson('POST', `${url}/auth/token`, { refresh_token: refreshToken });

test.serial('lock then unlock: the refresh and access tokens from before the lock stay ended on every instance; new ones work', async (t) => {
  const account = await accountWithPassword(app.db.pool);
  const session = await signedIn(account.email);
  const key = await loadSigningKey(app.db.pool, undefined, testBox);
  const cli = await issueCliToken(app.db.pool, key, account.email, 3_600);
  await setAccountLockedByEmail(app.db.pool, account.email, true);
  await setAccountLockedByEmail(app.db.pool, account.email, false);
  for (const instance of app.instances) {
    await assertProblem(t, await refresh(instance.url, session.refresh_token), 401, 'invalid_refresh_token');
  }
  await refusedEverywhere(t, session.access_token, 'the session token from before the lock');
  await refusedEverywhere(t, cli.issued.token, 'the token-issue token from before the lock');
  const again = await signedIn(account.email);
  const cliAgain = await issueCliToken(app.db.pool, key, account.email, 3_600);
  for (const instance of app.instances) {
    t.is((await me(instance.url, again.access_token)).status, 200);
    t.is((await me(instance.url, cliAgain.issued.token)).status, 200);
  }
  t.is((await refresh(app.instance.url, again.refresh_token)).status, 200);
});

test.serial('a token whose iat is 10 s ahead (an issuer clock running fast) is refused everywhere once the account is locked', async (t) => {
  const account = await accountWithPassword(app.db.pool);
  const key = await loadSigningKey(app.db.pool, undefined, testBox);
  const { rows } = await app.db.pool.query<{ token_epoch: string }>('select token_epoch from accounts where id = $1', [account.id]);
  const issuedAt = Math.floor(Date.now() / 1000) + 10;
  // As `backplane token issue` signs it under `faketime -f +10s`.
  const token = await new SignJWT({ email: account.email, amr: ['cli'], ep: Number(rows[0]!.token_epoch) })
    .setProtectedHeader({ alg: ALGORITHM, kid: key.kid, typ: 'at+jwt' })
    .setIssuer(ISSUER)
    .setSubject(account.id)
    .setJti(randomUUID())
    .setIssuedAt(issuedAt)
    .setExpirationTime(issuedAt + 900)
    .sign(key.privateKey);
  for (const instance of app.instances) {
    t.is((await me(instance.url, token)).status, 200);
  }
  await setAccountLockedByEmail(app.db.pool, account.email, true);
  await refusedEverywhere(t, token, 'the token with an iat ahead of the lock');
});

test.serial('sign-out ends the refresh tokens of that session, whether it names the refresh token or not', async (t) => {
  const account = await accountWithPassword(app.db.pool);
  const byAccess = await signedIn(account.email);
  const byRefresh = await signedIn(account.email);
  const rotated = (await (await refresh(app.instance.url, byRefresh.refresh_token)).json()) as Tokens;
  t.is((await sendJson('POST', `${app.instance.url}/auth/sign-out`, {}, bearer(byAccess.access_token))).status, 204);
  t.is(
    (await sendJson('POST', `${app.instances[1]!.url}/auth/sign-out`, { refresh_token: rotated.refresh_token }, bearer(byRefresh.access_token))).status,
    204,
  );
  for (const instance of app.instances) {
    await assertProblem(t, await refresh(instance.url, byAccess.refresh_token), 401, 'invalid_refresh_token');
    await assertProblem(t, await refresh(instance.url, rotated.refresh_token), 401, 'invalid_refresh_token');
  }
  await refusedEverywhere(t, rotated.access_token, 'the rotated token of the signed-out family');
});

test.serial('a deleted account: its refresh tokens are refused too', async (t) => {
  const account = await accountWithPassword(app.db.pool);
  const session = await signedIn(account.email);
  await app.db.pool.query('delete from accounts where id = $1', [account.id]);
  for (const instance of app.instances) {
    await assertProblem(t, await refresh(instance.url, session.refresh_token), 401, 'invalid_refresh_token');
  }
});

test.serial('refresh-token reuse ends every refresh and access token of the family, the newest included', async (t) => {
  const account = await accountWithPassword(app.db.pool);
  const first = await signedIn(account.email);
  const second = (await (await refresh(app.instance.url, first.refresh_token)).json()) as Tokens;
  const third = (await (await refresh(app.instances[1]!.url, second.refresh_token)).json()) as Tokens;
  await assertProblem(t, await refresh(app.instances[2]!.url, first.refresh_token), 401, 'invalid_refresh_token');
  for (const instance of app.instances) {
    await assertProblem(t, await refresh(instance.url, third.refresh_token), 401, 'invalid_refresh_token');
  }
  for (const tokens of [first, second, third]) {
    await refusedEverywhere(t, tokens.access_token, 'an access token of the reused family');
  }
});

test('sign-outs racing rotations of the same family: no refresh token of the family survives', async (t) => {
  const account = await accountWithPassword(app.db.pool);
  const sessions = await Promise.all(Array.from({ length: 5 }, () => signedIn(account.email)));
  const outcomes = await Promise.all(
    sessions.map(async (session, index) => {
      const instance = app.instances[index % app.instances.length]!;
      const [rotated] = await Promise.all([
        refresh(instance.url, session.refresh_token),
        sendJson('POST', `${instance.url}/auth/sign-out`, { refresh_token: session.refresh_token }, bearer(session.access_token)),
      ]);
      return rotated.status === 200 ? ((await rotated.json()) as Tokens) : undefined;
    }),
  );
  for (const rotated of outcomes.filter((outcome) => outcome !== undefined)) {
    await assertProblem(t, await refresh(app.instance.url, rotated.refresh_token), 401, 'invalid_refresh_token');
  }
  const { rows } = await app.db.pool.query<{ n: number }>('select count(*)::int as n from sessions where account_id = $1 and revoked_at is null', [account.id]);
  t.is(rows[0]!.n, 0);
});
