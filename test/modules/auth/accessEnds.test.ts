import test, { type ExecutionContext } from 'ava';
import { bearerIdentifier as identifyCaller } from '../../../src/modules/auth/index.ts';
import { setAccountLockedByEmail } from '../../../src/modules/auth/service.ts';
import { loadSigningKey } from '../../../src/modules/auth/signingKeys.ts';
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
  // Tokens issued within two seconds of the lock are refused too (iat has whole seconds): sign in after them.
  await new Promise((resolve) => setTimeout(resolve, 3_000));
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
