import test from 'ava';
import { waitFor } from '../../support/cluster.ts';
import { useInstances } from '../../support/fixture.ts';
import { getJson } from '../../support/http.ts';
import { PUBLIC_URL, type TestProvider, startTestProvider } from '../../support/oidcProvider.ts';
import { assertProblem } from '../../support/problems.ts';
import { accountWithToken, bearer } from '../../support/tokens.ts';
import { signInThroughProvider } from './support.ts';

let provider: TestProvider;
test.before(async () => {
  provider = await startTestProvider('acme');
  await provider.stop();
});
const app = useInstances(test, { env: () => ({ APP_OIDC_PROVIDERS: JSON.stringify([provider.entry('acme')]), APP_PUBLIC_URL: PUBLIC_URL }) });
test.after.always(() => provider?.stop());

test.serial('a provider down at start-up never stops the service: /readyz stays 200, verbose and /ops/system report it, its routes answer 503', async (t) => {
  const ready = await getJson(`${app.instance.url}/readyz?verbose`);
  t.is(ready.status, 200);
  t.is(ready.body.status, 'ok');
  t.like(
    ready.body.checks.find((check: { name: string }) => check.name === 'oidc:acme'),
    { status: 'error' },
  );
  t.like(
    ready.body.checks.find((check: { name: string }) => check.name === 'database'),
    { status: 'ok' },
  );

  const { token } = await accountWithToken(app.db.pool, { roles: ['platform_admin'] });
  const system = await getJson(`${app.instance.url}/ops/system`, bearer(token));
  t.like(
    system.body.checks.find((check: { name: string }) => check.name === 'oidc:acme'),
    { status: 'error' },
  );

  await assertProblem(t, await fetch(`${app.instance.url}/auth/providers/acme/start`, { redirect: 'manual' }), 503, 'provider_unavailable');
});

test.serial('once the provider answers, discovery is retried and sign-in works', async (t) => {
  await provider.start();
  await waitFor(
    async () => {
      const { body } = await getJson(`${app.instance.url}/readyz?verbose`);
      return body.checks.find((check: { name: string }) => check.name === 'oidc:acme').status === 'ok' ? true : undefined;
    },
    40_000,
    'the provider to be discovered',
  );
  provider.addPerson('pia-sub', 'pia@example.com');
  const signedIn = await signInThroughProvider(app.instance.url, 'acme', 'pia-sub');
  t.is(signedIn.callback.status, 200);
});
