import test from 'ava';
import { waitFor } from '../../support/cluster.ts';
import { useInstances } from '../../support/fixture.ts';
import { sendJson } from '../../support/http.ts';
import { assertProblem } from '../../support/problems.ts';
import { accountWithPassword, raiseAddressLimit, signIn } from '../../support/signIn.ts';

const LOGIN_ATTEMPTS = 10; // the default of auth.login_attempts

// Two instances: a block one of them learnt stays in its memory unless the clearing reaches it.
const app = useInstances(test, {
  count: 2,
  options: { rateLimitTimeoutMs: 10_000 },
  accounts: { admin: { roles: ['platform_admin'] }, viewer: { roles: ['ops_viewer'] } },
});
test.before(() => raiseAddressLimit(app.instance.url, app.accounts.admin.token));

const lookup = (query: string, headers = app.headers.viewer) => fetch(`${app.instances[0]!.url}/ops/ratelimits?${query}`, { headers });
const clear = (query: string, body: unknown, headers = app.headers.admin) =>
  sendJson('DELETE', `${app.instances[0]!.url}/ops/ratelimits?${query}`, body, headers);

test.serial('a blocked email is shown with when it is free again; clearing it lets it sign in on every instance at once', async (t) => {
  const account = await accountWithPassword(app.db.pool);
  for (let attempt = 0; attempt < LOGIN_ATTEMPTS; attempt += 1) {
    await assertProblem(t, await signIn(app.instances[0]!.url, account.email, 'wrong'), 401, 'invalid_credentials');
  }
  // The second instance is refused too, and from now on knows the block in its memory.
  await assertProblem(t, await signIn(app.instances[1]!.url, account.email), 429, 'too_many_attempts');
  await assertProblem(t, await signIn(app.instances[1]!.url, account.email), 429, 'too_many_attempts');

  const query = `email=${encodeURIComponent(account.email.toUpperCase())}&address=127.0.0.1`;
  const before = await lookup(query);
  t.is(before.status, 200);
  const { limiters } = (await before.json()) as { limiters: any[] };
  t.deepEqual(
    limiters.map((entry) => [entry.limiter, entry.covers, entry.blocked]),
    [
      ['auth_login', 'email_and_address', true],
      ['auth_login_address', 'email', false],
      ['auth_ip', 'address', false],
      ['auth_mfa', 'account', false],
    ],
  );
  t.like(limiters[0], { limit: LOGIN_ATTEMPTS, remaining: 0 });
  t.true(Date.parse(limiters[0].blocked_until) > Date.now() + 10_000);
  t.true(Date.parse(limiters[0].full_at) >= Date.parse(limiters[0].blocked_until));
  t.is(limiters[1].remaining, 50 - LOGIN_ATTEMPTS);

  const cleared = await clear(query, { reason: 'INC-9: the customer called support' });
  t.is(cleared.status, 200);
  const body = (await cleared.json()) as any;
  // auth_mfa had no bucket: nothing was spent on the account's two-factor changes.
  t.deepEqual(body.cleared.sort(), ['auth_ip', 'auth_login', 'auth_login_address']);
  t.true(body.limiters.every((entry: any) => !entry.blocked && entry.full_at === null));
  // The other instance forgets its known block within a second (generous bound for a loaded machine).
  await waitFor(
    async () => ((await signIn(app.instances[1]!.url, account.email)).status === 200 ? true : undefined),
    5_000,
    'the second instance to admit the sign-in',
  );
  const audit = await app.db.pool.query(`select actor_id, metadata from audit_events where action = 'ratelimit.buckets.cleared'`);
  t.is(audit.rows.length, 1);
  t.like(audit.rows[0], { actor_id: app.accounts.admin.id, metadata: { reason: 'INC-9: the customer called support', address: '127.0.0.1' } });
});

test.serial('a malformed or missing subject is 400, a missing reason 422, and only ops.ratelimits.write clears', async (t) => {
  await assertProblem(t, await lookup('email=not-an-email'), 400, 'ratelimit_subject_invalid');
  await assertProblem(t, await lookup('address=300.1.2.3'), 400, 'ratelimit_subject_invalid');
  await assertProblem(t, await lookup(''), 400, 'ratelimit_subject_invalid');
  await assertProblem(t, await clear('email=a@example.com', {}), 422, 'ratelimit_reason_required');
  await assertProblem(t, await clear('email=a@example.com', { reason: 'x' }, app.headers.viewer), 403, 'forbidden');
  await assertProblem(t, await lookup('email=a@example.com', {}), 401, 'unauthenticated');
  const fresh = (await (await lookup('address=2001:db8::1')).json()) as { limiters: any[] };
  t.like(fresh.limiters, [{ limiter: 'auth_ip', blocked: false, blocked_until: null, full_at: null }]);
});
