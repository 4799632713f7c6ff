import test, { type ExecutionContext } from 'ava';
import type { RateLimit } from '../../../src/modules/ratelimit/index.ts';
import { fixedRateLimits } from '../../support/rateLimits.ts';
import { useInstances } from '../../support/fixture.ts';
import { type PlainResponse, send, statuses } from '../../support/forwarded.ts';
import { sendJson } from '../../support/http.ts';
import { validateProblem } from '../../support/problems.ts';
import { accountWithPassword, signIn } from '../../support/signIn.ts';

// The seed's 60 at once, but paid back one a minute: these tests send 61 requests one after the
// other, which on a busy machine can take longer than the default's one-second interval.
const hourly: RateLimit = { limit: 60, periodSeconds: 3600 };
let perAddress = hourly;
const app = useInstances(test, {
  env: { APP_TRUSTED_PROXIES: '127.0.0.1/32' },
  options: { rateLimits: fixedRateLimits({ auth_ip: () => perAddress }) },
  accounts: { admin: { roles: ['platform_admin'] } },
});

// An empty sign-in passes the limit and stops at validation (422).
const viaProxy = (client: string, path = '/auth/sign-in', method = 'POST') => send(app.instance.url, { path, method, forwardedFor: client });

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
  t.true(
    passed.every((status) => status === 422),
    passed.join(),
  );
  const last = await viaProxy('198.51.100.1');
  assertRateLimited(t, last);
  const other = await viaProxy('198.51.100.2');
  t.is(other.status, 422);
  t.is(other.headers['ratelimit-policy'], '"auth_ip";q=60;w=3600');
  t.is(other.headers.ratelimit, '"auth_ip";r=59;t=60');
});

test.serial('a peer outside the trusted ranges is limited as itself, whatever it forwards', async (t) => {
  const spoofing = (index: number) => send(app.instance.url, { path: '/auth/sign-in', localAddress: '127.0.0.2', forwardedFor: `203.0.113.${index % 250}` });
  const passed = await statuses(60, spoofing);
  t.true(
    passed.every((status) => status === 422),
    passed.join(),
  );
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
  t.true(
    spent.every((status) => status !== 429),
    spent.join(),
  );
  assertRateLimited(t, await viaProxy(client, '/auth/providers/example/start', 'GET'));
});

test.serial('IPv6 clients share the budget of their /64', async (t) => {
  const passed = await statuses(60, (index) => viaProxy(`2001:db8:1:2::${(index % 9) + 1}`));
  t.true(
    passed.every((status) => status === 422),
    passed.join(),
  );
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

const metricValue = async (series: RegExp) => {
  const line = (await app.instance.registry.metrics()).split('\n').find((text) => series.test(text));
  return line ? Number(line.split(' ').pop()) : 0;
};

test.serial('a refusal known from memory is answered before the framework, exactly as the database refusal before it', async (t) => {
  const client = '198.51.100.5';
  const fromMemory = /^backplane_ratelimit_decisions_total\{.*limiter="auth_ip".*allowed="false".*source="memory"/;
  const refusedRequests = /^backplane_http_request_duration_seconds_count\{(?=.*method="POST")(?=.*route="unmatched")(?=.*status="429")/;
  t.true((await statuses(60, () => viaProxy(client))).every((status) => status === 422));
  const memoryBefore = await metricValue(fromMemory);
  const countedBefore = await metricValue(refusedRequests);
  const decided = await viaProxy(client);
  assertRateLimited(t, decided);
  const early = await send(app.instance.url, { path: '/auth/bench?x=1', forwardedFor: client, headers: { 'X-Request-Id': 'trace-42' }, body: { any: 'body' } });
  assertRateLimited(t, early);
  t.is(early.headers['x-request-id'], 'trace-42');
  t.is(early.headers['cache-control'], 'no-store');
  const shape = (response: PlainResponse) => ({
    headers: Object.keys(response.headers)
      .filter((name) => name !== 'date')
      .sort(),
    body: Object.keys(response.body ?? {}).sort(),
    contentType: response.headers['content-type'],
  });
  t.deepEqual(shape(early), shape(decided));
  t.true((await metricValue(fromMemory)) > memoryBefore);
  t.is(await metricValue(refusedRequests), countedBefore + 2);
});

test.serial('during maintenance a client over its budget is told about maintenance, except on the sign-in routes it leaves open', async (t) => {
  const client = '198.51.100.6';
  t.true((await statuses(61, () => viaProxy(client))).includes(429));
  const maintenance = (value: boolean) => sendJson('PUT', `${app.instance.url}/ops/settings/maintenance.enabled`, { value, reason: 'test' }, app.headers.admin);
  t.is((await maintenance(true)).status, 200);
  try {
    const held = await viaProxy(client, '/auth/mfa/totp');
    t.is(held.status, 503);
    t.is(held.body?.code, 'maintenance');
    assertRateLimited(t, await viaProxy(client, '/auth/sign-in'));
  } finally {
    t.is((await maintenance(false)).status, 200);
  }
});

test.serial('a client over its budget can still sign out: the session ends instead of living on behind a 429', async (t) => {
  const account = await accountWithPassword(app.db.pool);
  const { access_token: token, refresh_token: refresh } = (await (await signIn(app.instance.url, account.email)).json()) as {
    access_token: string;
    refresh_token: string;
  };
  const client = '198.51.100.7';
  t.true((await statuses(61, () => viaProxy(client))).includes(429));
  const signedOut = await send(app.instance.url, {
    path: '/auth/sign-out',
    forwardedFor: client,
    headers: { Authorization: `Bearer ${token}` },
    body: { refresh_token: refresh },
  });
  t.is(signedOut.status, 204);
  t.is((await sendJson('POST', `${app.instance.url}/auth/token`, { refresh_token: refresh })).status, 401);
  // Still counted elsewhere under /auth.
  assertRateLimited(t, await viaProxy(client));
});
