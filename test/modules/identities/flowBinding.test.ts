import test, { type ExecutionContext } from 'ava';
import { decodeJwt } from 'jose';
import { issueAccessToken } from '../../../src/modules/auth/accessTokens.ts';
import { createAccount, setAccountLockedByEmail } from '../../../src/modules/auth/service.ts';
import { loadSigningKey } from '../../../src/modules/auth/signingKeys.ts';
import { clearFlowCookie, flowCookie, readFlowCookie } from '../../../src/modules/identities/flowCookie.ts';
import { useInstances } from '../../support/fixture.ts';
import { PUBLIC_URL, type TestProvider, authorizeAtProvider, onInstance, startTestProvider } from '../../support/oidcProvider.ts';
import { assertProblem } from '../../support/problems.ts';
import { sendJson } from '../../support/http.ts';
import { accountWithPassword, signIn } from '../../support/signIn.ts';
import { bearer, testBox } from '../../support/tokens.ts';
import { flowCookieOf } from './support.ts';

let provider: TestProvider;
test.before(async () => {
  provider = await startTestProvider('acme');
});
const app = useInstances(test, { env: () => ({ APP_OIDC_PROVIDERS: JSON.stringify([provider.entry('acme')]), APP_PUBLIC_URL: PUBLIC_URL }) });
test.after.always(() => provider?.stop());

const start = (headers: Record<string, string> = {}) => fetch(`${app.instance.url}/auth/providers/acme/start`, { redirect: 'manual', headers });
const callback = (returned: URL, cookie?: string) => fetch(onInstance(returned, app.instance.url), cookie ? { headers: { Cookie: cookie } } : {});
const stateOf = (started: Response) => new URL(started.headers.get('Location')!).searchParams.get('state')!;
const count = async (sql: string, values: unknown[]) => (await app.db.pool.query<{ n: number }>(`select count(*)::int as n from ${sql}`, values)).rows[0]!.n;
const flowExists = async (state: string) => (await count('identity_flows where state = $1', [state])) === 1;

async function passwordAccount(email: string) {
  const account = await createAccount(app.db.pool, email, 'a long enough password');
  const token = (await issueAccessToken(await loadSigningKey(app.db.pool, undefined, testBox), { accountId: account.id, email, methods: ['pwd'] }, 600)).token;
  return { account, token };
}

test.serial('start sets an HttpOnly, SameSite=Lax cookie for the flow; the callback clears it', async (t) => {
  const started = await start();
  const [line] = started.headers.getSetCookie();
  t.regex(line!, /^backplane_oidc_flow=[\w-]{43}; Max-Age=600; Path=\/; HttpOnly; SameSite=Lax$/);
  const answered = await callback(new URL(`${PUBLIC_URL}/auth/providers/acme/callback?code=x&state=${stateOf(started)}`));
  t.deepEqual(answered.headers.getSetCookie(), ['backplane_oidc_flow=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax']);
});

test('over https the cookie is Secure and __Host- prefixed; a malformed cookie value counts as none', (t) => {
  const cookie = flowCookie('https://app.example.com');
  t.deepEqual(cookie, { name: '__Host-backplane_oidc_flow', secure: true });
  t.is(clearFlowCookie(cookie), '__Host-backplane_oidc_flow=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax; Secure');
  const secret = 'a'.repeat(43);
  t.is(readFlowCookie(cookie, `other=1; __Host-backplane_oidc_flow=${secret}`), secret);
  t.is(readFlowCookie(cookie, `backplane_oidc_flow=${secret}`), undefined);
  t.is(readFlowCookie(cookie, '__Host-backplane_oidc_flow=short'), undefined);
  t.is(readFlowCookie(cookie, ''), undefined);
});

test.serial("a link flow completed by another browser is refused and links nothing; its owner's browser completes it once", async (t) => {
  const victim = await passwordAccount('victim@example.com');
  const linkStart = await start(bearer(victim.token));
  t.is(linkStart.status, 302);
  // The attacker has the victim's authorization URL, a flow of their own, and an identity at the provider.
  provider.addPerson('mallory-sub', 'mallory@example.com');
  const attackerStart = await start();
  const attackerReturn = await authorizeAtProvider(linkStart.headers.get('Location')!, 'mallory-sub');

  for (const cookie of [undefined, flowCookieOf(attackerStart)]) {
    const refused = await callback(attackerReturn, cookie);
    const body = await assertProblem(t, refused, 401, 'invalid_state');
    t.is(body.access_token, undefined);
  }
  t.is(await count('identities where subject = $1', ['mallory-sub']), 0);
  t.is(await count('identities where account_id = $1', [victim.account.id]), 0);
  t.is(await count('sessions where account_id = $1', [victim.account.id]), 0);
  t.is(await count('accounts where email = $1', ['mallory@example.com']), 0);
  t.is(await count("audit_events where action in ('auth.identity.linked', 'auth.sign_in.succeeded') and actor_id = $1", [victim.account.id]), 0);
  // Neither flow was spent by the refusals: each still belongs to its own browser.
  t.true(await flowExists(stateOf(linkStart)));
  t.true(await flowExists(stateOf(attackerStart)));

  provider.addPerson('victim-sub', 'victim.elsewhere@example.com');
  const victimReturn = await authorizeAtProvider(linkStart.headers.get('Location')!, 'victim-sub');
  const linked = await callback(victimReturn, flowCookieOf(linkStart));
  const body = (await linked.json()) as { access_token: string };
  t.is(linked.status, 200, JSON.stringify(body));
  t.is(decodeJwt(body.access_token).sub, victim.account.id);
  t.deepEqual((await app.db.pool.query('select subject from identities where account_id = $1', [victim.account.id])).rows, [{ subject: 'victim-sub' }]);

  // Replayed, with the same cookie, or the attacker's code with the owner's cookie: the flow is spent.
  await assertProblem(t, await callback(victimReturn, flowCookieOf(linkStart)), 401, 'invalid_state');
  await assertProblem(t, await callback(attackerReturn, flowCookieOf(linkStart)), 401, 'invalid_state');
  t.is(await count('identities where subject = $1', ['mallory-sub']), 0);
});

test.serial("a sign-in flow is bound too: another browser cannot finish the attacker's sign-in (login CSRF)", async (t) => {
  provider.addPerson('eve-sub', 'eve@example.com');
  const attackerStart = await start();
  const attackerReturn = await authorizeAtProvider(attackerStart.headers.get('Location')!, 'eve-sub');
  const victimStart = await start();

  for (const cookie of [undefined, flowCookieOf(victimStart)]) {
    await assertProblem(t, await callback(attackerReturn, cookie), 401, 'invalid_state');
  }
  t.is(await count('accounts where email = $1', ['eve@example.com']), 0);
  t.is(await count('identities where subject = $1', ['eve-sub']), 0);
  t.is(await count('auth_token_revocations where subject = $1', ['eve-sub']), 0);

  const own = await callback(attackerReturn, flowCookieOf(attackerStart));
  t.is(own.status, 200);
  t.is(await count('identities where subject = $1', ['eve-sub']), 1);
});

test.serial('a second start in the same browser replaces the cookie: the first flow can no longer complete', async (t) => {
  provider.addPerson('two-tabs-sub', 'two.tabs@example.com');
  const first = await start();
  const second = await start({ Cookie: flowCookieOf(first) });
  const firstReturn = await authorizeAtProvider(first.headers.get('Location')!, 'two-tabs-sub');
  await assertProblem(t, await callback(firstReturn, flowCookieOf(second)), 401, 'invalid_state');
  t.is(await count('identities where subject = $1', ['two-tabs-sub']), 0);
});

test.serial('a state or code that is not text the service could have made is refused, never a 500', async (t) => {
  const started = await start();
  const cookie = flowCookieOf(started);
  const base = `${PUBLIC_URL}/auth/providers/acme/callback`;
  for (const state of ['%ED%A0%80', 'a'.repeat(512)]) {
    await assertProblem(t, await callback(new URL(`${base}?code=x&state=${state}`), cookie), 401, 'invalid_state');
  }
  // NUL is refused by the router for every text field (ADR 0080) before the route looks at state.
  for (const state of ['%00', `${stateOf(started)}%00`]) {
    await assertProblem(t, await callback(new URL(`${base}?code=x&state=${state}`), cookie), 422, 'validation_failed');
  }
  await assertProblem(t, await callback(new URL(`${base}?code=a%00b&state=${stateOf(started)}`), cookie), 422, 'validation_failed');
  await assertProblem(t, await callback(new URL(`${base}?code=%E2%80%A8&state=${stateOf(started)}`), cookie), 422, 'validation_failed');
  t.true(await flowExists(stateOf(started)));
});

/** A link flow started with the token, taken through the provider as `subject`, then `end` run before the callback. */
async function linkEndedBeforeCallback(t: ExecutionContext, token: string, accountId: string, subject: string, end: () => Promise<void>) {
  const linkStart = await start(bearer(token));
  t.is(linkStart.status, 302);
  provider.addPerson(subject, `${subject}@elsewhere.example.com`);
  const returned = await authorizeAtProvider(linkStart.headers.get('Location')!, subject);
  await end();
  const sessionsBefore = await count('sessions where account_id = $1', [accountId]);
  const body = await assertProblem(t, await callback(returned, flowCookieOf(linkStart)), 401, 'session_ended');
  t.is(body.access_token, undefined);
  t.is(await count('identities where subject = $1', [subject]), 0);
  t.is(await count('sessions where account_id = $1', [accountId]), sessionsBefore);
  t.is(await count("audit_events where action = 'auth.identity.linked' and actor_id = $1", [accountId]), 0);
}

test.serial('a link flow belongs to the session that started it: signed out before the callback, nothing is linked', async (t) => {
  const account = await accountWithPassword(app.db.pool);
  const session = (await (await signIn(app.instance.url, account.email)).json()) as { access_token: string };
  await linkEndedBeforeCallback(t, session.access_token, account.id, 'signed-out-sub', async () => {
    t.is((await sendJson('POST', `${app.instance.url}/auth/sign-out`, {}, bearer(session.access_token))).status, 204);
  });
});

test.serial('a link flow started with a token-issue token ends with a lock, even one undone before the callback', async (t) => {
  const { account, token } = await passwordAccount('locked.linker@example.com');
  await linkEndedBeforeCallback(t, token, account.id, 'locked-linker-sub', async () => {
    await setAccountLockedByEmail(app.db.pool, account.email, true);
    await setAccountLockedByEmail(app.db.pool, account.email, false);
  });
});

test.serial('a link flow whose session was revoked by refresh-token reuse links nothing', async (t) => {
  const account = await accountWithPassword(app.db.pool);
  const session = (await (await signIn(app.instance.url, account.email)).json()) as { access_token: string; refresh_token: string };
  await linkEndedBeforeCallback(t, session.access_token, account.id, 'reused-sub', async () => {
    t.is((await sendJson('POST', `${app.instance.url}/auth/token`, { refresh_token: session.refresh_token })).status, 200);
    t.is((await sendJson('POST', `${app.instance.url}/auth/token`, { refresh_token: session.refresh_token })).status, 401);
  });
});
