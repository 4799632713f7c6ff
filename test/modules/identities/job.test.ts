import test from 'ava';
import { waitFor } from '../../support/cluster.ts';
import { useInstances } from '../../support/fixture.ts';
import { getJson } from '../../support/http.ts';
import { PUBLIC_URL, type TestProvider, startTestProvider } from '../../support/oidcProvider.ts';
import { bearer } from '../../support/tokens.ts';
import { box, signInThroughProvider, storedRefreshToken } from './support.ts';

let provider: TestProvider;
test.before(async () => {
  provider = await startTestProvider('acme');
});
const app = useInstances(test, {
  env: () => ({ APP_OIDC_PROVIDERS: JSON.stringify([provider.entry('acme')]), APP_PUBLIC_URL: PUBLIC_URL }),
  accounts: { admin: { roles: ['platform_admin'] } },
});
test.after.always(() => provider?.stop());

const revokeJob = async () => {
  const { body } = await getJson(`${app.instance.url}/ops/jobs/overview`, app.headers.admin);
  return body.jobs.find((job: { name: string }) => job.name === 'auth_revoke_tokens');
};

test.serial('the job auth_revoke_tokens revokes queued tokens; the overview and the metrics show its queue and outcomes', async (t) => {
  const refreshTokens: string[] = [];
  for (const name of ['mia', 'ned', 'ola']) {
    provider.addPerson(`${name}-sub`, `${name}@example.com`);
    const signedIn = await signInThroughProvider(app.instance.url, 'acme', `${name}-sub`);
    refreshTokens.push(await storedRefreshToken(app.db.pool, 'acme', `${name}-sub`));
    t.is((await fetch(`${app.instance.url}/auth/account`, { method: 'DELETE', headers: bearer(signedIn.body.access_token) })).status, 204);
  }
  await app.db.pool.query('insert into auth_token_revocations (provider, subject, token_sealed) values ($1, $2, $3)', [
    'gone',
    'x',
    box.seal('t', 'identity:gone:x'),
  ]);

  const before = await revokeJob();
  t.like(before, { schedule: '@every 1m', enabled: true });
  t.like(before.backlog, { depth: 4, due: 4, in_progress: 0, last_24h: { revoked: 0, retrying: 0, abandoned: 0 } });
  t.truthy(before.backlog.oldest_due_at);

  const asked = await fetch(`${app.instance.url}/ops/jobs/definitions/auth_revoke_tokens/run`, { method: 'POST', headers: app.headers.admin });
  // 429 only when the scheduled run of this minute just went: the next one does the same work.
  t.true([202, 429].includes(asked.status));
  const after = await waitFor(
    async () => {
      const job = await revokeJob();
      return job.backlog.depth === 1 && job.last_run?.state === 'succeeded' ? job : undefined;
    },
    90_000,
    'the queue to be worked through',
  );
  t.like(after.backlog, { depth: 1, due: 0, in_progress: 0, oldest_due_at: null, last_24h: { revoked: 3, retrying: 1, abandoned: 0 } });
  for (const refreshToken of refreshTokens) {
    t.is((await provider.refresh(refreshToken)).body.error, 'invalid_grant');
  }

  const metrics = await app.instance.registry.metrics();
  t.regex(metrics, /backplane_token_revocations_total\{provider="acme",outcome="revoked",role="instance",worker="0"\} 3/);
  t.regex(metrics, /backplane_token_revocations_total\{provider="gone",outcome="retrying",role="instance",worker="0"\} 1/);
  t.regex(metrics, /backplane_token_revocation_queue_depth\{role="instance",worker="0"\} 1/);
  t.regex(metrics, /backplane_token_revocation_oldest_due_seconds\{role="instance",worker="0"\} 0/);
});

test.serial('/readyz stays 200 with every provider discovered, and lists the provider check', async (t) => {
  const { status, body } = await getJson(`${app.instance.url}/readyz?verbose`);
  t.is(status, 200);
  t.like(
    body.checks.find((check: { name: string }) => check.name === 'oidc:acme'),
    { status: 'ok' },
  );
});
