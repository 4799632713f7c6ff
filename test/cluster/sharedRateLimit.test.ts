import test from 'ava';
import { fixedRateLimits } from '../support/rateLimits.ts';
import { useInstances } from '../support/fixture.ts';
import { send } from '../support/forwarded.ts';

// The seed's 60 at once but paid back one a minute, and a generous decision bound (it covers the
// wait for a connection too): this file is about what the shared buckets admit, not about how fast
// a busy machine sends 150 requests.
const app = useInstances(test, {
  count: 3,
  env: { APP_TRUSTED_PROXIES: '127.0.0.1/32' },
  options: { rateLimits: fixedRateLimits({ auth_ip: () => ({ limit: 60, periodSeconds: 3600 }) }), rateLimitTimeoutMs: 10_000 },
});

async function fallbackDecisions(): Promise<number> {
  let total = 0;
  for (const instance of app.instances) {
    const metric = (await instance.registry.getMetricsAsJSON()).find((m) => m.name === 'backplane_ratelimit_decisions_total');
    const values = (metric?.values ?? []) as Array<{ labels: Record<string, string>; value: number }>;
    total += values.filter((value) => value.labels.source === 'fallback').reduce((sum, value) => sum + value.value, 0);
  }
  return total;
}

test('three instances on one database: concurrent requests for one client admit exactly the budget', async (t) => {
  const client = '198.51.100.77';
  const responses = await Promise.all(
    Array.from({ length: 150 }, (_v, index) => send(app.instances[index % 3]!.url, { path: '/auth/sign-in', forwardedFor: client })),
  );
  const admitted = responses.filter((response) => response.status !== 429);
  const refused = responses.filter((response) => response.status === 429);
  // Decided in the database, exactly the budget; had an instance decided alone, its share keeps the
  // cluster under it, so what is guaranteed either way is: never more, every refusal a proper 429.
  const alone = await fallbackDecisions();
  t.true(admitted.length <= 60);
  if (alone === 0) {
    t.is(admitted.length, 60);
  }
  t.true(admitted.every((response) => response.status === 422));
  t.is(refused.length, 150 - admitted.length);
  t.true(refused.every((response) => response.body?.code === 'rate_limited' && Number(response.headers['retry-after']) >= 1));
  // Every instance took part, and each now refuses this client.
  for (const instance of app.instances) {
    t.is((await send(instance.url, { path: '/auth/sign-in', forwardedFor: client })).status, 429);
  }
});
