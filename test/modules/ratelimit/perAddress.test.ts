import test, { type ExecutionContext } from 'ava';
import type { RunningInstance } from '../../../src/app/instance.ts';
import type { RateLimit } from '../../../src/modules/ratelimit/index.ts';
import { fixedRateLimits } from '../../support/rateLimits.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { type PlainResponse, send, statuses } from '../../support/forwarded.ts';
import { startTestInstance } from '../../support/instance.ts';
import { validateProblem } from '../../support/problems.ts';

let db: TestDatabase;
let instance: RunningInstance;
// The seed's 60 at once, but paid back one a minute: these tests send 61 requests one after the
// other, which on a busy machine can take longer than the default's one-second interval.
const hourly: RateLimit = { limit: 60, periodSeconds: 3600 };
let perAddress = hourly;

test.before(async () => {
  db = await createTestDatabase();
  const rateLimits = fixedRateLimits({ auth_ip: () => perAddress });
  instance = await startTestInstance(db.url, { APP_TRUSTED_PROXIES: '127.0.0.1/32' }, { rateLimits });
});

test.after.always(async () => {
  await instance?.drain();
  await db?.drop();
});

// An empty sign-in passes the limit and stops at validation (422).
const viaProxy = (client: string, path = '/auth/sign-in', method = 'POST') => send(instance.url, { path, method, forwardedFor: client });

function assertRateLimited(t: ExecutionContext, response: PlainResponse, quota = 60, window = 3600) {
  t.is(response.status, 429);
  t.is(response.body?.code, 'rate_limited');
  t.is(response.body?.status, 429);
  t.true(validateProblem(response.body), JSON.stringify(validateProblem.errors));
  t.is(response.body?.request_id, response.headers['x-request-id']);
  t.regex(String(response.headers['content-type']), /^application\/problem\+json/);
  const retryAfter = Number(response.headers['retry-after']);
  t.true(Number.isInteger(retryAfter) && retryAfter >= 1);
  t.is(response.headers['ratelimit-policy'], `"auth_ip";q=${quota};w=${window}`);
  t.is(response.headers.ratelimit, `"auth_ip";r=0;t=${retryAfter}`);
}

test.serial('behind a trusted proxy: 60 requests for one forwarded client pass, the 61st is 429; another client still passes', async (t) => {
  const passed = await statuses(60, () => viaProxy('198.51.100.1'));
  t.true(passed.every((status) => status === 422), passed.join());
  const last = await viaProxy('198.51.100.1');
  assertRateLimited(t, last);
  const other = await viaProxy('198.51.100.2');
  t.is(other.status, 422);
  t.is(other.headers['ratelimit-policy'], '"auth_ip";q=60;w=3600');
  t.is(other.headers.ratelimit, '"auth_ip";r=59;t=60');
});

test.serial('a peer outside the trusted ranges is limited as itself, whatever it forwards', async (t) => {
  const spoofing = (index: number) => send(instance.url, { path: '/auth/sign-in', localAddress: '127.0.0.2', forwardedFor: `203.0.113.${index % 250}` });
  const passed = await statuses(60, spoofing);
  t.true(passed.every((status) => status === 422), passed.join());
  assertRateLimited(t, await spoofing(61));
});

test.serial('only changes under /auth and the provider redirects count, whatever the case of the path', async (t) => {
  const client = '198.51.100.3';
  const reads = await statuses(70, () => viaProxy(client, '/auth/me', 'GET'));
  t.true(reads.every((status) => status === 401));
  const elsewhere = await statuses(70, () => viaProxy(client, '/ops/anything'));
  t.true(elsewhere.every((status) => status !== 429));
  const counted = [
    () => viaProxy(client, '/AUTH/Sign-In/'),
    () => viaProxy(client, '/auth/providers/example/start', 'GET'),
    () => viaProxy(client, '/auth/providers/example/callback', 'GET'),
    () => viaProxy(client, '/auth/mfa/totp', 'DELETE'),
    () => viaProxy(client, '/auth'),
  ];
  const spent = await statuses(60, (index) => counted[index % counted.length]!());
  t.true(spent.every((status) => status !== 429), spent.join());
  assertRateLimited(t, await viaProxy(client, '/auth/providers/example/start', 'GET'));
});

test.serial('IPv6 clients share the budget of their /64', async (t) => {
  const passed = await statuses(60, (index) => viaProxy(`2001:db8:1:2::${(index % 9) + 1}`));
  t.true(passed.every((status) => status === 422), passed.join());
  assertRateLimited(t, await viaProxy('2001:db8:1:2:ffff::1'));
  t.is((await viaProxy('2001:db8:1:3::1')).status, 422);
});

test.serial('a lowered limit applies to the next request, and a raised one too', async (t) => {
  const client = '198.51.100.4';
  t.is((await viaProxy(client)).status, 422);
  perAddress = { limit: 2, periodSeconds: 3600 };
  try {
    t.is((await viaProxy(client)).status, 422);
    assertRateLimited(t, await viaProxy(client), 2);
    perAddress = hourly;
    t.is((await viaProxy(client)).status, 422);
  } finally {
    perAddress = hourly;
  }
});
