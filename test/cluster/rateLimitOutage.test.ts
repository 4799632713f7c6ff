import test from 'ava';
import { type StoppableDatabase, startStoppableDatabase } from '../support/stoppableDatabase.ts';
import type { RunningInstance } from '../../src/app/instance.ts';
import { fixedRateLimits } from '../support/rateLimits.ts';
import { waitFor } from '../support/cluster.ts';
import { send, statuses } from '../support/forwarded.ts';
import { startTestInstance } from '../support/instance.ts';

// This file stops its database on purpose, so it runs its own server rather than the shared one.
let server: StoppableDatabase;
let instance: RunningInstance;

test.before(async () => {
  server = await startStoppableDatabase();
  // 60 at once, paid back one a minute: the counts below do not depend on how fast requests go.
  const rateLimits = fixedRateLimits({ auth_ip: () => ({ limit: 60, periodSeconds: 3600 }) });
  instance = await startTestInstance(server.url, { APP_TRUSTED_PROXIES: '127.0.0.1/32' }, { rateLimits });
});

test.after.always(async () => {
  await instance?.drain();
  await server?.remove();
});

async function decisions(source: string): Promise<number> {
  const metric = (await instance.registry.getMetricsAsJSON()).find((m) => m.name === 'backplane_ratelimit_decisions_total');
  const values = (metric?.values ?? []) as Array<{ labels: Record<string, string>; value: number }>;
  return values.filter((value) => value.labels.source === source).reduce((sum, value) => sum + value.value, 0);
}

const viaProxy = (client: string) => send(instance.url, { path: '/auth/sign-in', forwardedFor: client });

test.serial('with the database stopped the local fallback keeps the same limit, and no request fails', async (t) => {
  const before = await statuses(10, () => viaProxy('198.51.100.1'));
  t.true(before.every((status) => status === 422));
  t.true((await decisions('database')) >= 10);

  await server.stop();
  const known = await statuses(51, () => viaProxy('198.51.100.1'));
  t.deepEqual(known, [...Array<number>(50).fill(422), 429]);
  const fresh = await statuses(61, () => viaProxy('198.51.100.2'));
  t.deepEqual(fresh, [...Array<number>(60).fill(422), 429]);
  t.true((await decisions('fallback')) >= 100);
  const fallbacks = (await instance.registry.getSingleMetricAsString('backplane_ratelimit_fallbacks_total')).split('\n');
  t.true(fallbacks.some((line) => /limiter="auth_ip"/.test(line) && /reason="error"/.test(line)));

  await server.restart();
  const databaseBefore = await decisions('database');
  await waitFor(async () => {
    await viaProxy('198.51.100.3');
    return (await decisions('database')) > databaseBefore ? true : undefined;
  }, 15_000, 'decisions from the database again');
  t.pass();
});
