import test from 'ava';
import { decodeJwt } from 'jose';
import { issueAccessToken } from '../../../src/modules/auth/accessTokens.ts';
import { createAccount } from '../../../src/modules/auth/service.ts';
import { loadSigningKey } from '../../../src/modules/auth/signingKeys.ts';
import { claimDueRevocations } from '../../../src/modules/identities/store/revocations.ts';
import { waitFor } from '../../support/cluster.ts';
import { useInstances } from '../../support/fixture.ts';
import { PUBLIC_URL, type TestProvider, startTestProvider } from '../../support/oidcProvider.ts';
import { assertProblem } from '../../support/problems.ts';
import { bearer, testBox } from '../../support/tokens.ts';
import { box, identitiesOn, signInThroughProvider, storedRefreshToken } from './support.ts';

let provider: TestProvider;
let identities: Awaited<ReturnType<typeof identitiesOn>>;
test.before(async () => {
  provider = await startTestProvider('acme');
});
// Registered before useInstances so it closes before the instance drains; opened after it starts.
test.after.always(async () => {
  await identities?.close();
});
// No job workers: these tests run the job's work themselves, one run at a time.
const app = useInstances(test, {
  env: () => ({ APP_OIDC_PROVIDERS: JSON.stringify([provider.entry('acme')]), APP_PUBLIC_URL: PUBLIC_URL, APP_JOB_WORKERS: '0' }),
});
test.before(async () => {
  identities = await identitiesOn(app.db.pool, [provider], ['acme']);
});
test.after.always(() => provider?.stop());

interface QueueRow {
  id: string;
  provider: string;
  subject: string;
  token_sealed: string;
  attempts: number;
  wait_seconds: number;
  last_error: string | null;
  lease_expires_at: Date | null;
}

const queue = async () =>
  (
    await app.db.pool.query<QueueRow>(
      `select id::text, provider, subject, token_sealed, attempts, last_error, lease_expires_at,
              round(extract(epoch from next_attempt_at - now()))::int as wait_seconds
       from auth_token_revocations order by id`,
    )
  ).rows;
const makeDue = () => app.db.pool.query('update auth_token_revocations set next_attempt_at = now()');
const clearQueue = () => app.db.pool.query('delete from auth_token_revocations');

async function passwordAccountLinkedTo(subject: string, email: string) {
  const account = await createAccount(app.db.pool, email, 'a long enough password');
  const token = (await issueAccessToken(await loadSigningKey(app.db.pool, undefined, testBox), { accountId: account.id, email, methods: ['pwd'] }, 600)).token;
  provider.addPerson(subject, email);
  const linked = await signInThroughProvider(app.instance.url, 'acme', subject, bearer(token));
  if (linked.callback.status !== 200) {
    throw new Error(`linking failed: ${JSON.stringify(linked.body)}`);
  }
  return { account, token };
}

test.serial('unlink answers 204 and queues the token; after the job runs, the provider rejects that refresh token', async (t) => {
  await clearQueue();
  const { account, token } = await passwordAccountLinkedTo('gina-sub', 'gina@example.com');
  const refreshToken = await storedRefreshToken(app.db.pool, 'acme', 'gina-sub');
  const sealed = (await app.db.pool.query('select refresh_token_sealed from identities where subject = $1', ['gina-sub'])).rows[0]!.refresh_token_sealed;
  t.is((await provider.refresh(refreshToken)).status, 200);

  const unlinked = await fetch(`${app.instance.url}/auth/identities/acme`, { method: 'DELETE', headers: bearer(token) });
  t.is(unlinked.status, 204);
  t.is((await app.db.pool.query('select 1 from identities where subject = $1', ['gina-sub'])).rowCount, 0);
  const [row] = await queue();
  t.like(row, { provider: 'acme', subject: 'gina-sub', token_sealed: sealed, attempts: 0 });
  const audit = await app.db.pool.query("select metadata from audit_events where action = 'auth.identity.unlinked' and actor_id = $1", [account.id]);
  t.deepEqual(audit.rows[0]!.metadata, { provider: 'acme', revocation_queued: true });

  t.deepEqual(await identities.module.revokeQueuedTokens(), { revoked: 1, retrying: 0, abandoned: 0 });
  t.deepEqual(await queue(), []);
  t.is(provider.revocations.at(-1), 200);
  const refused = await provider.refresh(refreshToken);
  t.is(refused.status, 400);
  t.is(refused.body.error, 'invalid_grant');
});

test.serial('a second sign-in queues the refresh token it replaces; the job revokes it, and the new one after account deletion', async (t) => {
  await clearQueue();
  provider.addPerson('olga-sub', 'olga@example.com');
  t.is((await signInThroughProvider(app.instance.url, 'acme', 'olga-sub')).callback.status, 200);
  const first = await storedRefreshToken(app.db.pool, 'acme', 'olga-sub');
  t.deepEqual(await queue(), []);
  const again = await signInThroughProvider(app.instance.url, 'acme', 'olga-sub');
  t.is(again.callback.status, 200);
  const second = await storedRefreshToken(app.db.pool, 'acme', 'olga-sub');
  t.not(second, first);
  const [row, ...others] = await queue();
  t.deepEqual(others, []);
  t.like(row, { provider: 'acme', subject: 'olga-sub', attempts: 0 });
  t.is(box.open(row!.token_sealed, 'identity:acme:olga-sub'), first);

  t.deepEqual(await identities.module.revokeQueuedTokens(), { revoked: 1, retrying: 0, abandoned: 0 });
  t.is((await provider.refresh(first)).body.error, 'invalid_grant');
  t.is((await provider.refresh(second)).status, 200);

  t.is((await fetch(`${app.instance.url}/auth/account`, { method: 'DELETE', headers: bearer(again.body.access_token) })).status, 204);
  t.deepEqual(await identities.module.revokeQueuedTokens(), { revoked: 1, retrying: 0, abandoned: 0 });
  t.is((await provider.refresh(second)).body.error, 'invalid_grant');
  t.deepEqual(await queue(), []);
});

test.serial('a linked identity signed in again and then unlinked: both of its refresh tokens end revoked', async (t) => {
  await clearQueue();
  const { token } = await passwordAccountLinkedTo('pia-sub', 'pia@example.com');
  const first = await storedRefreshToken(app.db.pool, 'acme', 'pia-sub');
  t.is((await signInThroughProvider(app.instance.url, 'acme', 'pia-sub')).callback.status, 200);
  const second = await storedRefreshToken(app.db.pool, 'acme', 'pia-sub');
  t.is((await queue()).length, 1);

  t.is((await fetch(`${app.instance.url}/auth/identities/acme`, { method: 'DELETE', headers: bearer(token) })).status, 204);
  t.is((await queue()).length, 2);
  t.deepEqual(await identities.module.revokeQueuedTokens(), { revoked: 2, retrying: 0, abandoned: 0 });
  for (const refreshToken of [first, second]) {
    t.is((await provider.refresh(refreshToken)).body.error, 'invalid_grant');
  }
});

test.serial('unlinking the last way to sign in is refused with 409 and queues nothing', async (t) => {
  await clearQueue();
  provider.addPerson('hank-sub', 'hank@example.com');
  const signedIn = await signInThroughProvider(app.instance.url, 'acme', 'hank-sub');
  const refused = await fetch(`${app.instance.url}/auth/identities/acme`, { method: 'DELETE', headers: bearer(signedIn.body.access_token) });
  await assertProblem(t, refused, 409, 'last_sign_in_method');
  t.is((await app.db.pool.query('select 1 from identities where subject = $1', ['hank-sub'])).rowCount, 1);
  t.deepEqual(await queue(), []);
});

test.serial('two unlinks at once of an account with two providers and no password: exactly one succeeds', async (t) => {
  await clearQueue();
  provider.addPerson('nora-sub', 'nora@example.com');
  const signedIn = await signInThroughProvider(app.instance.url, 'acme', 'nora-sub');
  const accountId = decodeJwt(signedIn.body.access_token).sub!;
  // A second provider's identity, as if linked earlier through another provider.
  await app.db.pool.query("insert into identities (account_id, provider, subject, refresh_token_sealed) values ($1, 'other', 'nora-other', $2)", [
    accountId,
    box.seal('other-token', 'identity:other:nora-other'),
  ]);
  const unlink = (name: string) => fetch(`${app.instance.url}/auth/identities/${name}`, { method: 'DELETE', headers: bearer(signedIn.body.access_token) });
  const statuses = (await Promise.all([unlink('acme'), unlink('other')])).map((response) => response.status).sort();
  t.deepEqual(statuses, [204, 409]);
  t.is((await app.db.pool.query('select 1 from identities where account_id = $1', [accountId])).rowCount, 1);
  t.is((await queue()).length, 1);
});

test.serial('unlink: not linked is 404, no bearer is 401, a malformed name is 422', async (t) => {
  const { token } = await passwordAccountLinkedTo('ivy-sub', 'ivy@example.com');
  await assertProblem(t, await fetch(`${app.instance.url}/auth/identities/other`, { method: 'DELETE', headers: bearer(token) }), 404, 'identity_not_found');
  await assertProblem(t, await fetch(`${app.instance.url}/auth/identities/acme`, { method: 'DELETE' }), 401, 'unauthenticated');
  await assertProblem(t, await fetch(`${app.instance.url}/auth/identities/ACME!`, { method: 'DELETE', headers: bearer(token) }), 422, 'validation_failed');
  await assertProblem(t, await fetch(`${app.instance.url}/auth/account`, { method: 'DELETE' }), 401, 'unauthenticated');
});

test.serial('account deletion while the provider is down: 204 at once; the job retries with backoff and revokes once the provider is back', async (t) => {
  await clearQueue();
  provider.addPerson('jack-sub', 'jack@example.com');
  const signedIn = await signInThroughProvider(app.instance.url, 'acme', 'jack-sub');
  const accountId = decodeJwt(signedIn.body.access_token).sub!;
  const refreshToken = await storedRefreshToken(app.db.pool, 'acme', 'jack-sub');
  await provider.stop();
  try {
    const deleted = await fetch(`${app.instance.url}/auth/account`, { method: 'DELETE', headers: bearer(signedIn.body.access_token) });
    t.is(deleted.status, 204);
    t.is((await app.db.pool.query('select 1 from accounts where id = $1', [accountId])).rowCount, 0);
    t.is((await app.db.pool.query('select 1 from identities where subject = $1', ['jack-sub'])).rowCount, 0);
    const audit = await app.db.pool.query("select metadata from audit_events where action = 'auth.account.deleted' and actor_id = $1", [accountId]);
    t.deepEqual(audit.rows[0]!.metadata, { identities: ['acme'], revocations_queued: 1 });

    t.deepEqual(await identities.module.revokeQueuedTokens(), { revoked: 0, retrying: 1, abandoned: 0 });
    let [row] = await queue();
    t.like(row, { attempts: 1, lease_expires_at: null });
    t.true(Math.abs(row!.wait_seconds - 60) <= 2, `waits ${row!.wait_seconds} s`);
    t.regex(row!.last_error!, /^network_error/);
    t.false(row!.last_error!.includes(refreshToken));

    // Not due yet: a run leaves it alone.
    t.deepEqual(await identities.module.revokeQueuedTokens(), { revoked: 0, retrying: 0, abandoned: 0 });
    await makeDue();
    await identities.module.revokeQueuedTokens();
    [row] = await queue();
    t.is(row!.attempts, 2);
    t.true(Math.abs(row!.wait_seconds - 120) <= 2, `waits ${row!.wait_seconds} s`);
  } finally {
    await provider.start();
  }
  await makeDue();
  t.deepEqual(await identities.module.revokeQueuedTokens(), { revoked: 1, retrying: 0, abandoned: 0 });
  t.deepEqual(await queue(), []);
  t.is((await provider.refresh(refreshToken)).body.error, 'invalid_grant');
});

test.serial('account deletion while a sign-in of the same account holds its identity waits for it, never deadlocks, and queues the newest token', async (t) => {
  await clearQueue();
  provider.addPerson('quinn-sub', 'quinn@example.com');
  const signedIn = await signInThroughProvider(app.instance.url, 'acme', 'quinn-sub');
  const accountId = decodeJwt(signedIn.body.access_token).sub!;
  // A sign-in's transaction, by hand: the identity row locked, a new token stored, then the session insert's key-share lock on the account.
  const signIn = await app.db.pool.connect();
  try {
    await signIn.query('begin');
    await signIn.query('select 1 from identities where subject = $1 for update', ['quinn-sub']);
    await signIn.query('update identities set refresh_token_sealed = $2 where subject = $1', ['quinn-sub', box.seal('newest', 'identity:acme:quinn-sub')]);
    const deletion = fetch(`${app.instance.url}/auth/account`, { method: 'DELETE', headers: bearer(signedIn.body.access_token) });
    await waitFor(
      async () =>
        (await app.db.pool.query("select 1 from pg_stat_activity where wait_event_type = 'Lock' and query like '%from identities%for update%'")).rowCount
          ? true
          : undefined,
      30_000,
      'the deletion to wait for the identity',
    );
    await signIn.query('select 1 from accounts where id = $1 for key share', [accountId]);
    await signIn.query('commit');
    t.is((await deletion).status, 204);
  } finally {
    signIn.release();
  }
  const rows = await queue();
  t.is(rows.length, 1);
  t.is(box.open(rows[0]!.token_sealed, 'identity:acme:quinn-sub'), 'newest');
});

test.serial('a provider that keeps failing: backoff doubles, and after 10 failures the row is abandoned with an audit event', async (t) => {
  await clearQueue();
  await app.db.pool.query('insert into auth_token_revocations (provider, subject, token_sealed) values ($1, $2, $3)', [
    'acme',
    'kim-sub',
    box.seal('a-token-the-provider-never-sees', 'identity:acme:kim-sub'),
  ]);
  await provider.stop();
  const waits: number[] = [];
  try {
    for (let attempt = 1; attempt <= 10; attempt += 1) {
      await makeDue();
      const summary = await identities.module.revokeQueuedTokens();
      t.deepEqual(summary, attempt < 10 ? { revoked: 0, retrying: 1, abandoned: 0 } : { revoked: 0, retrying: 0, abandoned: 1 });
      const [row] = await queue();
      if (row) {
        waits.push(Math.round(row.wait_seconds / 60));
      }
    }
  } finally {
    await provider.start();
  }
  t.deepEqual(waits, [1, 2, 4, 8, 16, 32, 64, 128, 256]);
  t.deepEqual(await queue(), []);
  const { rows } = await app.db.pool.query(
    "select actor_kind, actor_id, outcome, metadata from audit_events where action = 'auth.identity.revocation_abandoned'",
  );
  t.is(rows.length, 1);
  t.like(rows[0], { actor_kind: 'system', actor_id: 'auth_revoke_tokens', outcome: 'failure' });
  t.like(rows[0]!.metadata, { provider: 'acme', attempts: 10 });
  t.regex(rows[0]!.metadata.last_error, /^network_error/);
});

test.serial('rows another run holds are skipped until its lease passes, then revoked once', async (t) => {
  await clearQueue();
  const { token } = await passwordAccountLinkedTo('lena-sub', 'lena@example.com');
  const refreshToken = await storedRefreshToken(app.db.pool, 'acme', 'lena-sub');
  t.is((await fetch(`${app.instance.url}/auth/identities/acme`, { method: 'DELETE', headers: bearer(token) })).status, 204);
  // Another run claimed the row and died before it could revoke anything.
  const claimed = await claimDueRevocations(app.db.pool, crypto.randomUUID(), 10, 60);
  t.is(claimed.length, 1);
  const before = provider.revocations.length;
  t.deepEqual(await identities.module.revokeQueuedTokens(), { revoked: 0, retrying: 0, abandoned: 0 });
  t.is(provider.revocations.length, before);

  await app.db.pool.query("update auth_token_revocations set lease_expires_at = now() - interval '1 second'");
  t.deepEqual(await identities.module.revokeQueuedTokens(), { revoked: 1, retrying: 0, abandoned: 0 });
  t.deepEqual(provider.revocations.slice(before), [200]);
  t.is((await provider.refresh(refreshToken)).body.error, 'invalid_grant');
});

test.serial('a row whose provider is no longer configured waits with backoff, without a request', async (t) => {
  await clearQueue();
  await app.db.pool.query('insert into auth_token_revocations (provider, subject, token_sealed) values ($1, $2, $3)', [
    'gone',
    'x',
    box.seal('t', 'identity:gone:x'),
  ]);
  const before = provider.revocations.length;
  t.deepEqual(await identities.module.revokeQueuedTokens(), { revoked: 0, retrying: 1, abandoned: 0 });
  t.like((await queue())[0], { attempts: 1, last_error: 'provider_not_configured' });
  t.is(provider.revocations.length, before);
});
