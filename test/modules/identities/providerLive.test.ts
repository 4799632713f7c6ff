import test from 'ava';
import { waitFor } from '../../support/cluster.ts';
import { useInstances } from '../../support/fixture.ts';
import { getJson } from '../../support/http.ts';
import { PUBLIC_URL, type TestProvider, startTestProvider } from '../../support/oidcProvider.ts';
import { accountWithToken, bearer } from '../../support/tokens.ts';

interface Check {
  name: string;
  status: 'ok' | 'error';
  error?: string;
  last_ok_at?: string;
}

let provider: TestProvider;
test.before(async () => {
  provider = await startTestProvider('acme');
});
const app = useInstances(test, { env: () => ({ APP_OIDC_PROVIDERS: JSON.stringify([provider.entry('acme')]), APP_PUBLIC_URL: PUBLIC_URL }) });
test.after.always(() => provider?.stop());

const readiness = async () => {
  const { status, body } = await getJson(`${app.instance.url}/readyz?verbose`);
  return { status, body: body as { status: string; checks: Check[] } };
};
const acmeCheck = async () => (await readiness()).body.checks.find((check) => check.name === 'oidc:acme')!;
// The check asks the provider again at most every 10 s, and /readyz reuses its answer for 1 s.
const untilAcme = (status: Check['status']) =>
  waitFor(
    async () => {
      const check = await acmeCheck();
      return check.status === status ? check : undefined;
    },
    30_000,
    `oidc:acme to be ${status}`,
  );

test.serial('the provider check follows the provider: stopped, it is reported within seconds, /readyz stays 200; restarted, it is ok again', async (t) => {
  const up = await untilAcme('ok');
  t.false(Number.isNaN(Date.parse(up.last_ok_at!)));

  await provider.stop();
  const down = await untilAcme('error');
  t.regex(down.error!, /acme/);
  t.true(Date.parse(down.last_ok_at!) >= Date.parse(up.last_ok_at!), 'the last success is still shown while the provider is down');
  const ready = await readiness();
  t.is(ready.status, 200);
  t.is(ready.body.status, 'ok');
  t.like(
    ready.body.checks.find((check) => check.name === 'database'),
    { status: 'ok' },
  );
  const { token } = await accountWithToken(app.db.pool, { roles: ['ops_viewer'] });
  const system = await getJson(`${app.instance.url}/ops/system`, bearer(token));
  t.like(
    system.body.checks.find((check: Check) => check.name === 'oidc:acme'),
    { status: 'error', last_ok_at: down.last_ok_at },
  );

  await provider.start();
  const again = await untilAcme('ok');
  t.true(Date.parse(again.last_ok_at!) > Date.parse(down.last_ok_at!));
});
