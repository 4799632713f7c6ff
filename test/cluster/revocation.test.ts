import test from 'ava';
import { type TestCluster, startCluster, waitFor } from '../support/cluster.ts';
import { type TestDatabase, createTestDatabase } from '../support/database.ts';
import { TEST_ENCRYPTION_KEY } from '../support/instance.ts';
import { PUBLIC_URL, type TestProvider, startTestProvider } from '../support/oidcProvider.ts';
import { accountWithToken, bearer } from '../support/tokens.ts';
import { signInThroughProvider, storedRefreshToken } from '../modules/identities/support.ts';

let db: TestDatabase;
let provider: TestProvider;
let cluster: TestCluster;

test.before(async () => {
  db = await createTestDatabase();
  provider = await startTestProvider('acme');
  cluster = await startCluster(db.url, 2, {
    APP_OIDC_PROVIDERS: JSON.stringify([provider.entry('acme')]),
    APP_PUBLIC_URL: PUBLIC_URL,
    APP_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
    APP_JOB_LEASE_SECONDS: '2',
    APP_HEARTBEAT_SECONDS: '1',
  });
});

test.after.always(async () => {
  await cluster?.stop();
  await provider?.stop();
  await db?.drop();
});

const queued = async () =>
  (
    await db.pool.query<{ n: number; leased: number }>(
      'select count(*)::int as n, count(*) filter (where lease_expires_at > now())::int as leased from auth_token_revocations',
    )
  ).rows[0]!;

const schedule = async (token: string, value: string | null) =>
  fetch(`${cluster.url}/ops/jobs/definitions/auth_revoke_tokens`, {
    method: 'PUT',
    headers: { ...bearer(token), 'content-type': 'application/json' },
    body: JSON.stringify({ schedule: value, reason: 'the test decides when the batch runs' }),
  });

test('an instance killed in the middle of a batch: its rows are revoked after the lease, none lost, none refused by the provider', async (t) => {
  // The minute's slot would revoke the first rows while the others are still signing in on a loaded machine: it waits a day.
  const { token } = await accountWithToken(db.pool, { roles: ['platform_admin'] });
  t.is((await schedule(token, '@every 24h')).status, 200);
  const refreshTokens: string[] = [];
  for (let i = 0; i < 6; i += 1) {
    provider.addPerson(`killed-${i}`, `killed-${i}@example.com`);
    const signedIn = await signInThroughProvider(cluster.url, 'acme', `killed-${i}`);
    t.is(signedIn.callback.status, 200, JSON.stringify(signedIn.body));
    refreshTokens.push(await storedRefreshToken(db.pool, 'acme', `killed-${i}`));
    t.is((await fetch(`${cluster.url}/auth/account`, { method: 'DELETE', headers: bearer(signedIn.body.access_token) })).status, 204);
  }
  t.is((await queued()).n, 6);

  // Every revocation now takes 5 s, so the batch is still in flight when its instance dies.
  provider.revocationDelayMs = 5_000;
  // A slot that ran before the schedule changed keeps a new run away for a minute (429): ask until one is queued.
  await waitFor(
    async () => {
      const asked = await fetch(`${cluster.url}/ops/jobs/definitions/auth_revoke_tokens/run`, { method: 'POST', headers: bearer(token) });
      t.true([202, 429].includes(asked.status));
      return asked.status === 202 ? true : (await new Promise((resolve) => setTimeout(resolve, 1_000)), undefined);
    },
    90_000,
    'a run of auth_revoke_tokens to be queued',
  );
  const holder = await waitFor(
    async () => {
      const { rows } = await db.pool.query<{ pid: number }>(
        `select i.pid from job_runs r join release_instances i on i.instance_id = r.instance_id
       where r.job = 'auth_revoke_tokens' and r.state = 'running'`,
      );
      return rows[0] && (await queued()).leased === 6 && provider.revocationsReceived > 0 ? rows[0].pid : undefined;
    },
    90_000,
    'a run holding the batch with requests in flight',
  );
  process.kill(holder, 'SIGKILL');

  // Nothing is lost: the rows wait out their lease (3 minutes; made to pass here) for another run.
  t.deepEqual(await queued(), { n: 6, leased: 6 });
  provider.revocationDelayMs = 0;
  await db.pool.query('update auth_token_revocations set lease_expires_at = now() where lease_expires_at is not null');
  // Back to the minute's slot, counted from now: the next slot runs on the instance that lives. A kept-alive
  // connection to the killed instance fails once, so the change is asked again.
  await waitFor(async () => ((await schedule(token, null)).status === 200 ? true : undefined), 30_000, 'the default schedule back');
  await waitFor(async () => ((await queued()).n === 0 ? true : undefined), 150_000, 'another instance to revoke the rows');

  for (const refreshToken of refreshTokens) {
    t.is((await provider.refresh(refreshToken)).body.error, 'invalid_grant');
  }
  // A token the killed run had already revoked is revoked again, and RFC 7009 answers 200 to that.
  t.true(provider.revocations.length >= 6);
  t.true(
    provider.revocations.every((status) => status === 200),
    JSON.stringify(provider.revocations),
  );
  const { rows } = await db.pool.query("select count(*)::int as n from audit_events where action = 'auth.identity.revocation_abandoned'");
  t.is(rows[0]!.n, 0);
});
