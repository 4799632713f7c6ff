import test from 'ava';
import type { RunningInstance } from '../../../src/app/instance.ts';
import { type TestDatabase, createTestDatabase } from '../../support/database.ts';
import { send } from '../../support/forwarded.ts';
import { startTestInstance } from '../../support/instance.ts';
import { accountWithToken, bearer } from '../../support/tokens.ts';

let db: TestDatabase;
let instance: RunningInstance;
let token: string;

test.before(async () => {
  db = await createTestDatabase();
  token = (await accountWithToken(db.pool, { roles: ['platform_admin'] })).token;
  instance = await startTestInstance(db.url, { APP_TRUSTED_PROXIES: '127.0.0.1/32' });
});

test.after.always(async () => {
  await instance?.drain();
  await db?.drop();
});

test('the per-address limit follows auth.ip_requests_per_minute, changed through the settings API', async (t) => {
  const change = await fetch(`${instance.url}/ops/settings/auth.ip_requests_per_minute`, {
    method: 'PUT',
    headers: { ...bearer(token), 'Content-Type': 'application/json' },
    body: JSON.stringify({ value: 10, reason: 'load test of the limit' }),
  });
  t.is(change.status, 200);
  const statuses: number[] = [];
  for (let i = 0; i < 11; i += 1) {
    statuses.push((await send(instance.url, { path: '/auth/sign-in', forwardedFor: '203.0.113.50' })).status);
  }
  t.false(statuses.slice(0, 10).includes(429));
  const refused = await send(instance.url, { path: '/auth/sign-in', forwardedFor: '203.0.113.50' });
  t.is(refused.status, 429);
  t.is(refused.body?.code, 'rate_limited');
  t.regex(String(refused.headers['ratelimit-policy']), /q=10/);
  t.true(Number(refused.headers['retry-after']) >= 1);
});
