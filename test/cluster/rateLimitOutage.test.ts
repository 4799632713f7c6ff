import test from 'ava';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunningInstance } from '../../src/app/instance.ts';
import { fixedRateLimits } from '../support/rateLimits.ts';
import { type EmbeddedDatabase, openEmbeddedDatabase } from '../../src/platform/db/embedded.ts';
import { migrateUp } from '../../src/platform/db/migrations.ts';
import { createPool } from '../../src/platform/db/pool.ts';
import { waitFor } from '../support/cluster.ts';
import { send, statuses } from '../support/forwarded.ts';
import { startTestInstance } from '../support/instance.ts';

// This file stops its database on purpose, so it runs its own server rather than the shared one.
const dataDir = mkdtempSync(join(tmpdir(), 'backplane-ratelimit-outage-'));
chmodSync(dataDir, 0o755);
let server: EmbeddedDatabase;
let instance: RunningInstance;
let port: number;

test.before(async () => {
  server = await openEmbeddedDatabase({ dataDir, fast: true });
  port = Number(new URL(server.url).port);
  const pool = createPool({ connectionString: server.url, max: 2, applicationName: 'test' });
  await migrateUp(pool);
  await pool.end();
  // 60 at once, paid back one a minute: the counts below do not depend on how fast requests go.
  const rateLimits = fixedRateLimits({ auth_ip: () => ({ limit: 60, periodSeconds: 3600 }) });
  instance = await startTestInstance(server.url, { APP_TRUSTED_PROXIES: '127.0.0.1/32' }, { rateLimits });
});

test.after.always(async () => {
  await instance?.drain();
  await server?.stop();
  rmSync(dataDir, { recursive: true, force: true });
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

  server = await openEmbeddedDatabase({ dataDir, fast: true, port });
  const databaseBefore = await decisions('database');
  await waitFor(async () => {
    await viaProxy('198.51.100.3');
    return (await decisions('database')) > databaseBefore ? true : undefined;
  }, 15_000, 'decisions from the database again');
  t.pass();
});
