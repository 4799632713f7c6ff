import test from 'ava';
import { useInstances } from '../../support/fixture.ts';
import { sendJson } from '../../support/http.ts';
import { waitFor } from '../../support/cluster.ts';
import { assertProblem } from '../../support/problems.ts';
import { accountWithPassword, raiseAddressLimit, signIn } from '../../support/signIn.ts';

const LOGIN_ATTEMPTS = 10; // the default of auth.login_attempts

// Decisions get time to reach the database on a loaded test machine, instead of the local fallback.
const app = useInstances(test, { count: 3, options: { rateLimitTimeoutMs: 10_000 }, accounts: { admin: { roles: ['platform_admin'] } } });
test.before(() => raiseAddressLimit(app.instance.url, app.accounts.admin.token));

test.serial('three instances: concurrent wrong passwords for one email get exactly auth.login_attempts 401s, the rest 429', async (t) => {
  const account = await accountWithPassword(app.db.pool);
  const answers = await Promise.all(
    Array.from({ length: 3 * LOGIN_ATTEMPTS }, (_, index) => signIn(app.instances[index % 3]!.url, account.email, `wrong ${index}`)),
  );
  const unauthorized = answers.filter((answer) => answer.status === 401);
  const refused = answers.filter((answer) => answer.status === 429);
  t.is(unauthorized.length, LOGIN_ATTEMPTS);
  t.is(refused.length, 2 * LOGIN_ATTEMPTS);
  for (const answer of unauthorized) {
    await assertProblem(t, answer, 401, 'invalid_credentials');
  }
  for (const answer of refused) {
    t.true(Number(answer.headers.get('retry-after')) >= 1);
    t.is(answer.headers.get('ratelimit-policy'), `"auth_login";q=${LOGIN_ATTEMPTS};w=900`);
    t.regex(answer.headers.get('ratelimit') ?? '', /^"auth_login";r=0;t=\d+$/);
    await assertProblem(t, answer, 429, 'too_many_attempts');
  }
  // Even the right password waits now; the refusals are audited with their reason.
  await assertProblem(t, await signIn(app.instances[1]!.url, account.email), 429, 'too_many_attempts');
  const audit = await app.db.pool.query(
    `select metadata->>'reason' as reason, outcome, count(*)::int as n from audit_events
     where action = 'auth.sign_in.failed' and actor_label = $1 group by 1, 2 order by 1`,
    [account.email],
  );
  t.deepEqual(audit.rows, [
    { reason: 'invalid_credentials', outcome: 'failure', n: LOGIN_ATTEMPTS },
    { reason: 'rate_limited', outcome: 'denied', n: 2 * LOGIN_ATTEMPTS + 1 },
  ]);
});

test.serial('a lowered auth.login_attempts applies to the next sign-in on every instance', async (t) => {
  const account = await accountWithPassword(app.db.pool);
  const lowered = await sendJson('PUT', `${app.instances[0]!.url}/ops/settings/auth.login_attempts`, { value: 3, reason: 'under attack' }, app.headers.admin);
  t.is(lowered.status, 200);
  // The instance that took the change applies it to the very next sign-in.
  const first = await signIn(app.instances[0]!.url, account.email, 'wrong');
  t.is(first.headers.get('ratelimit-policy'), '"auth_login";q=3;w=900, "auth_login_address";q=50;w=900');
  await assertProblem(t, first, 401, 'invalid_credentials');
  // The others apply it as soon as the change notification reaches them (probed with other emails).
  for (const instance of app.instances.slice(1)) {
    await waitFor(
      async () =>
        (await signIn(instance.url, `probe-${Math.random()}@example.com`, 'wrong')).headers.get('ratelimit-policy')?.startsWith('"auth_login";q=3;w=900,') ||
        undefined,
      5_000,
      'the lowered limit on every instance',
    );
  }
  for (const instance of app.instances.slice(1)) {
    await assertProblem(t, await signIn(instance.url, account.email, 'wrong'), 401, 'invalid_credentials');
  }
  await assertProblem(t, await signIn(app.instances[2]!.url, account.email), 429, 'too_many_attempts');
  // Another email from the same network has its own budget.
  const fresh = await accountWithPassword(app.db.pool);
  t.is((await signIn(app.instances[0]!.url, fresh.email)).status, 200);
  await sendJson('PUT', `${app.instances[0]!.url}/ops/settings/auth.login_attempts`, { value: LOGIN_ATTEMPTS, reason: 'calm again' }, app.headers.admin);
});
