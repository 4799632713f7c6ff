import test from 'ava';
import { type StoppableDatabase, startStoppableDatabase } from '../support/stoppableDatabase.ts';
import type { RunningInstance } from '../../src/app/instance.ts';
import { fixedRateLimits } from '../support/rateLimits.ts';
import { waitFor } from '../support/cluster.ts';
import { type PlainResponse, send, statuses } from '../support/forwarded.ts';
import { startTestInstance } from '../support/instance.ts';

// This file stops its database on purpose, so it runs its own server rather than the shared one.
let server: StoppableDatabase;
const instances: RunningInstance[] = [];
// 60 at once, paid back one a minute: the counts below do not depend on how fast requests go.
let perAddress = 60;

test.before(async () => {
  server = await startStoppableDatabase();
  const rateLimits = fixedRateLimits({ auth_ip: () => ({ limit: perAddress, periodSeconds: 3600 }) });
  // Beats every 2 s, so each instance soon counts all three.
  const env = { APP_TRUSTED_PROXIES: '127.0.0.1/32', APP_HEARTBEAT_SECONDS: '2' };
  instances.push(...(await Promise.all([0, 1, 2].map(() => startTestInstance(server.url, env, { rateLimits })))));
});

test.after.always(async () => {
  await Promise.all(instances.map((instance) => instance.drain()));
  await server?.remove();
});

async function metricValues(instance: RunningInstance, name: string): Promise<Array<{ labels: Record<string, string>; value: number }>> {
  const metric = (await instance.registry.getMetricsAsJSON()).find((m) => m.name === name);
  return (metric?.values ?? []) as Array<{ labels: Record<string, string>; value: number }>;
}

async function decisions(instance: RunningInstance, source: string): Promise<number> {
  return (await metricValues(instance, 'backplane_ratelimit_decisions_total')).filter((v) => v.labels.source === source).reduce((sum, v) => sum + v.value, 0);
}

const gauge = async (instance: RunningInstance, name: string) => (await metricValues(instance, name))[0]?.value;

const viaProxy = (index: number, client: string) => send(instances[index % 3]!.url, { path: '/auth/sign-in', forwardedFor: client });

/** `count` requests for one client spread over the three instances at once. */
const flood = (client: string, count: number) => Promise.all(Array.from({ length: count }, (_v, index) => viaProxy(index, client)));

const admitted = (responses: PlainResponse[]) => responses.filter((response) => response.status !== 429);

function everyRefusalProper(responses: PlainResponse[]): boolean {
  return responses
    .filter((response) => response.status === 429)
    .every((response) => response.body?.code === 'rate_limited' && Number(response.headers['retry-after']) >= 1);
}

async function rateLimitCheck(instance: RunningInstance) {
  const response = await send(instance.url, { method: 'GET', path: '/readyz?verbose' });
  const checks = (response.body?.checks ?? []) as Array<{ name: string; status: string; since?: string }>;
  return checks.find((check) => check.name === 'ratelimit');
}

test.serial('with the database stopped the instances decide alone with their shares: the cluster admits at most the limit, and no request fails', async (t) => {
  await waitFor(
    async () =>
      (await Promise.all(instances.map((instance) => gauge(instance, 'backplane_ratelimit_live_instances')))).every((live) => live === 3) ? true : undefined,
    30_000,
    'every instance to count three',
  );
  // Half of one client's budget spent in the database, in turn on each instance, so each follows its bucket.
  const spent = await statuses(30, (index) => viaProxy(index, '198.51.100.1'));
  t.true(spent.every((status) => status === 422));
  for (const instance of instances) {
    t.true((await decisions(instance, 'database')) >= 10);
    t.like(await rateLimitCheck(instance), { status: 'ok' });
  }

  await server.stop();
  // The half-spent client: each instance grants a third of the 30 left.
  const partly = await flood('198.51.100.1', 150);
  t.true(admitted(partly).length <= 30);
  t.true(admitted(partly).every((response) => response.status === 422));
  t.true(everyRefusalProper(partly));
  // A fresh client: floor(60 / 3) on each instance, 60 in all, not 3 x 60.
  const fresh = await flood('198.51.100.2', 150);
  t.is(admitted(fresh).length, 60);
  t.true(admitted(fresh).every((response) => response.status === 422));
  t.true(everyRefusalProper(fresh));
  for (const instance of instances) {
    t.true((await decisions(instance, 'fallback')) >= 100);
    t.true((await gauge(instance, 'backplane_ratelimit_alone_since_seconds'))! > 0);
    // Readiness reuses a report for a second: the one from before the stop may still be served.
    const check = await waitFor(
      async () => {
        const current = await rateLimitCheck(instance);
        return current?.status === 'error' ? current : undefined;
      },
      10_000,
      'the readiness entry to report deciding alone',
    );
    t.false(Number.isNaN(Date.parse(check.since ?? '')));
  }
  const fallbacks = (await instances[0]!.registry.getSingleMetricAsString('backplane_ratelimit_fallbacks_total')).split('\n');
  t.true(fallbacks.some((line) => /limiter="auth_ip"/.test(line) && /reason="error"/.test(line) && / [1-9]\d*$/.test(line)));

  // A limit below the instance count leaves each a share of zero: every request is refused, as
  // the database's absence (503) rather than the client's excess (429).
  perAddress = 2;
  const none = await flood('198.51.100.3', 30);
  t.true(none.every((response) => response.status === 503 && response.body?.code === 'database_unavailable' && Number(response.headers['retry-after']) >= 1));
  perAddress = 60;

  await server.restart();
  for (const [index, instance] of instances.entries()) {
    const databaseBefore = await decisions(instance, 'database');
    await waitFor(
      async () => {
        await viaProxy(index, '198.51.100.4');
        return (await decisions(instance, 'database')) > databaseBefore ? true : undefined;
      },
      30_000,
      'decisions from the database again',
    );
    t.is(await gauge(instance, 'backplane_ratelimit_alone_since_seconds'), 0);
    await waitFor(async () => ((await rateLimitCheck(instance))?.status === 'ok' ? true : undefined), 10_000, 'the readiness entry to pass');
  }
});
