import test from 'ava';
import { useInstances } from '../../support/fixture.ts';
import { send } from '../../support/forwarded.ts';

const app = useInstances(test, { env: { APP_TRUSTED_PROXIES: '127.0.0.1/32' }, accounts: { admin: { roles: ['platform_admin'] } } });

test('the per-address limit follows auth.ip_requests_per_minute, changed through the settings API', async (t) => {
  const change = await fetch(`${app.instance.url}/ops/settings/auth.ip_requests_per_minute`, {
    method: 'PUT',
    headers: { ...app.headers.admin, 'Content-Type': 'application/json' },
    body: JSON.stringify({ value: 10, reason: 'load test of the limit' }),
  });
  t.is(change.status, 200);
  const statuses: number[] = [];
  for (let i = 0; i < 11; i += 1) {
    statuses.push((await send(app.instance.url, { path: '/auth/sign-in', forwardedFor: '203.0.113.50' })).status);
  }
  t.false(statuses.slice(0, 10).includes(429));
  const refused = await send(app.instance.url, { path: '/auth/sign-in', forwardedFor: '203.0.113.50' });
  t.is(refused.status, 429);
  t.is(refused.body?.code, 'rate_limited');
  t.regex(String(refused.headers['ratelimit-policy']), /q=10/);
  t.true(Number(refused.headers['retry-after']) >= 1);
});
