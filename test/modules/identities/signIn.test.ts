import test from 'ava';
import { decodeJwt } from 'jose';
import { issueAccessToken } from '../../../src/modules/auth/accessTokens.ts';
import { createAccount } from '../../../src/modules/auth/service.ts';
import { loadSigningKey } from '../../../src/modules/auth/signingKeys.ts';
import { useInstances } from '../../support/fixture.ts';
import { PUBLIC_URL, type TestProvider, authorizeAtProvider, onInstance, startTestProvider } from '../../support/oidcProvider.ts';
import { assertProblem } from '../../support/problems.ts';
import { accountWithToken, bearer, testBox } from '../../support/tokens.ts';
import { box, flowCookieOf, signInThroughProvider, storedRefreshToken } from './support.ts';

let provider: TestProvider;
test.before(async () => {
  provider = await startTestProvider('acme');
});
// No job workers: the revocation job would empty the queue whose growth these tests count.
const app = useInstances(test, {
  env: () => ({ APP_OIDC_PROVIDERS: JSON.stringify([provider.entry('acme')]), APP_PUBLIC_URL: PUBLIC_URL, APP_JOB_WORKERS: '0' }),
});
test.after.always(() => provider?.stop());

const queued = async () => (await app.db.pool.query<{ n: number }>('select count(*)::int as n from auth_token_revocations')).rows[0]!.n;

const accountCount = async (email: string) =>
  (await app.db.pool.query<{ n: number }>('select count(*)::int as n from accounts where lower(email) = lower($1)', [email])).rows[0]!.n;

test.serial('a first sign-in through the provider creates an account; a second one finds it', async (t) => {
  provider.addPerson('alice-sub', 'alice@example.com');
  const first = await signInThroughProvider(app.instance.url, 'acme', 'alice-sub');
  t.is(first.start.status, 302);
  t.is(first.callback.status, 200, JSON.stringify(first.body));
  t.is(first.body.token_type, 'Bearer');
  t.true(first.body.expires_in > 0);
  const claims = decodeJwt(first.body.access_token);
  t.deepEqual(claims.amr, ['oidc:acme']);
  t.is(await accountCount('alice@example.com'), 1);
  // The same token body as POST /auth/sign-in: the refresh token rotates like any session's.
  t.regex(String(first.body.refresh_token), /^[\w-]{40,}$/);
  const refreshed = await fetch(`${app.instance.url}/auth/token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ refresh_token: first.body.refresh_token }),
  });
  t.is(refreshed.status, 200);
  t.deepEqual(decodeJwt(((await refreshed.json()) as { access_token: string }).access_token).amr, ['oidc:acme']);
  const audited = await app.db.pool.query(`select count(*)::int as n from audit_events where action = 'auth.sign_in.succeeded' and actor_id = $1`, [
    claims.sub,
  ]);
  t.is(audited.rows[0].n, 1);

  const second = await signInThroughProvider(app.instance.url, 'acme', 'alice-sub');
  t.is(second.callback.status, 200);
  t.is(decodeJwt(second.body.access_token).sub, claims.sub);
  t.is(await accountCount('alice@example.com'), 1);

  const { rows } = await app.db.pool.query('select provider, subject, account_id::text from identities where subject = $1', ['alice-sub']);
  t.deepEqual(rows, [{ provider: 'acme', subject: 'alice-sub', account_id: claims.sub }]);
});

test.serial("the provider's refresh token is stored sealed, bound to provider and subject, and still valid at the provider", async (t) => {
  provider.addPerson('bob-sub', 'bob@example.com');
  t.is((await signInThroughProvider(app.instance.url, 'acme', 'bob-sub')).callback.status, 200);
  const { rows } = await app.db.pool.query<{ refresh_token_sealed: string }>('select refresh_token_sealed from identities where subject = $1', ['bob-sub']);
  const sealed = rows[0]!.refresh_token_sealed;
  const plaintext = await storedRefreshToken(app.db.pool, 'acme', 'bob-sub');
  t.false(sealed.includes(plaintext));
  t.throws(() => box.open(sealed, 'identity:acme:alice-sub'));
  t.is((await provider.refresh(plaintext)).status, 200);
});

test.serial('with a bearer token, start links the provider to that account instead of signing in', async (t) => {
  const owner = await createAccount(app.db.pool, 'carol@example.com', 'a long enough password');
  const ownerToken = (
    await issueAccessToken(await loadSigningKey(app.db.pool, undefined, testBox), { accountId: owner.id, email: owner.email, methods: ['pwd'] }, 300)
  ).token;
  // The provider knows carol under another address: linking never matches by email.
  provider.addPerson('carol-sub', 'carol.elsewhere@example.com');
  const linked = await signInThroughProvider(app.instance.url, 'acme', 'carol-sub', bearer(ownerToken));
  t.is(linked.callback.status, 200, JSON.stringify(linked.body));
  t.is(decodeJwt(linked.body.access_token).sub, owner.id);
  const { rows } = await app.db.pool.query('select account_id::text from identities where subject = $1', ['carol-sub']);
  t.is(rows[0]!.account_id, owner.id);
  t.is(await accountCount('carol.elsewhere@example.com'), 0);
  const audit = await app.db.pool.query("select metadata from audit_events where action = 'auth.identity.linked' and actor_id = $1", [owner.id]);
  t.deepEqual(audit.rows[0]!.metadata, { provider: 'acme', created_account: false });

  // A subject already linked elsewhere is refused; the new token it was given is kept nowhere, so it
  // is queued for revocation, and the token the other account keeps is left alone.
  const before = await queued();
  const someoneElse = await accountWithToken(app.db.pool);
  const taken = await signInThroughProvider(app.instance.url, 'acme', 'carol-sub', bearer(someoneElse.token));
  await assertProblem(t, taken.callback, 409, 'identity_in_use');
  t.is(await queued(), before + 1);
  t.is((await provider.refresh(await storedRefreshToken(app.db.pool, 'acme', 'carol-sub'))).status, 200);

  // One identity per provider and account: a second subject at acme is refused, and the token
  // it was given (linked nowhere) is queued for revocation.
  provider.addPerson('carol-second-sub', 'carol.second@example.com');
  const second = await signInThroughProvider(app.instance.url, 'acme', 'carol-second-sub', bearer(ownerToken));
  await assertProblem(t, second.callback, 409, 'provider_already_linked');
  t.is((await app.db.pool.query('select 1 from identities where subject = $1', ['carol-second-sub'])).rowCount, 0);
  t.is(await queued(), before + 2);
});

test.serial('a new subject needs a verified email that no account uses', async (t) => {
  provider.addPerson('unverified-sub', 'dave@example.com', false);
  await assertProblem(t, (await signInThroughProvider(app.instance.url, 'acme', 'unverified-sub')).callback, 403, 'provider_email_required');
  await createAccount(app.db.pool, 'erin@example.com', 'a long enough password');
  provider.addPerson('erin-sub', 'erin@example.com');
  await assertProblem(t, (await signInThroughProvider(app.instance.url, 'acme', 'erin-sub')).callback, 409, 'provider_link_required');
  t.is(await accountCount('dave@example.com'), 0);
  t.deepEqual(
    (await app.db.pool.query('select subject from auth_token_revocations where subject in ($1, $2) order by subject', ['erin-sub', 'unverified-sub'])).rows,
    [{ subject: 'erin-sub' }, { subject: 'unverified-sub' }],
  );
  const { rows } = await app.db.pool.query('select 1 from identities where subject in ($1, $2)', ['unverified-sub', 'erin-sub']);
  t.is(rows.length, 0);
});

test.serial('a state is single-use and expires after 10 minutes', async (t) => {
  provider.addPerson('frank-sub', 'frank@example.com');
  const start = await fetch(`${app.instance.url}/auth/providers/acme/start`, { redirect: 'manual' });
  const returned = await authorizeAtProvider(start.headers.get('Location')!, 'frank-sub');
  const cookie = { Cookie: flowCookieOf(start) };
  const first = await fetch(onInstance(returned, app.instance.url), { headers: cookie });
  t.is(first.status, 200);
  await assertProblem(t, await fetch(onInstance(returned, app.instance.url), { headers: cookie }), 401, 'invalid_state');

  const late = await fetch(`${app.instance.url}/auth/providers/acme/start`, { redirect: 'manual' });
  const state = new URL(late.headers.get('Location')!).searchParams.get('state')!;
  const { rows } = await app.db.pool.query<{ seconds: number }>(
    'select extract(epoch from expires_at - created_at)::int as seconds from identity_flows where state = $1',
    [state],
  );
  t.is(rows[0]!.seconds, 600);
  const lateReturn = await authorizeAtProvider(late.headers.get('Location')!, 'frank-sub');
  await app.db.pool.query("update identity_flows set expires_at = now() - interval '1 second' where state = $1", [state]);
  await assertProblem(t, await fetch(onInstance(lateReturn, app.instance.url), { headers: { Cookie: flowCookieOf(late) } }), 401, 'invalid_state');
});

test.serial('the authorization request carries PKCE (S256), state, nonce and the configured scopes', async (t) => {
  const start = await fetch(`${app.instance.url}/auth/providers/acme/start`, { redirect: 'manual' });
  t.is(start.headers.get('Cache-Control'), 'no-store');
  const url = new URL(start.headers.get('Location')!);
  t.is(url.origin, provider.issuer);
  t.is(url.searchParams.get('code_challenge_method'), 'S256');
  t.truthy(url.searchParams.get('code_challenge'));
  t.truthy(url.searchParams.get('nonce'));
  t.truthy(url.searchParams.get('state'));
  t.is(url.searchParams.get('scope'), 'openid email offline_access');
  t.is(url.searchParams.get('redirect_uri'), `${PUBLIC_URL}/auth/providers/acme/callback`);
});

test.serial('a refusal at the provider consumes the state and answers 401', async (t) => {
  const start = await fetch(`${app.instance.url}/auth/providers/acme/start`, { redirect: 'manual' });
  const state = new URL(start.headers.get('Location')!).searchParams.get('state')!;
  const cookie = { Cookie: flowCookieOf(start) };
  const refused = await fetch(`${app.instance.url}/auth/providers/acme/callback?error=access_denied&state=${state}`, { headers: cookie });
  await assertProblem(t, refused, 401, 'provider_sign_in_failed');
  await assertProblem(t, await fetch(`${app.instance.url}/auth/providers/acme/callback?code=x&state=${state}`, { headers: cookie }), 401, 'invalid_state');
});

test.serial('a forged code fails the exchange with 401', async (t) => {
  const start = await fetch(`${app.instance.url}/auth/providers/acme/start`, { redirect: 'manual' });
  const state = new URL(start.headers.get('Location')!).searchParams.get('state')!;
  const forged = await fetch(`${app.instance.url}/auth/providers/acme/callback?code=forged&state=${state}&iss=${encodeURIComponent(provider.issuer)}`, {
    headers: { Cookie: flowCookieOf(start) },
  });
  await assertProblem(t, forged, 401, 'provider_sign_in_failed');
});

test.serial('malformed and unknown input gets clear problems', async (t) => {
  await assertProblem(t, await fetch(`${app.instance.url}/auth/providers/Not%20A%20Name/start`, { redirect: 'manual' }), 422, 'validation_failed');
  await assertProblem(t, await fetch(`${app.instance.url}/auth/providers/nobody/start`, { redirect: 'manual' }), 404, 'provider_not_found');
  await assertProblem(t, await fetch(`${app.instance.url}/auth/providers/nobody/callback?state=abc&code=x`), 404, 'provider_not_found');
  await assertProblem(t, await fetch(`${app.instance.url}/auth/providers/acme/callback?code=x`), 422, 'validation_failed');
  await assertProblem(t, await fetch(`${app.instance.url}/auth/providers/acme/callback?code=x&state=a&state=b`), 422, 'validation_failed');
  await assertProblem(t, await fetch(`${app.instance.url}/auth/providers/acme/callback?code=x&state=unknownstateunknownstate`), 401, 'invalid_state');
  const invalidBearer = await fetch(`${app.instance.url}/auth/providers/acme/start`, { redirect: 'manual', headers: { Authorization: 'Bearer nope' } });
  await assertProblem(t, invalidBearer, 401, 'unauthenticated');
});
