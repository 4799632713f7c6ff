import test from 'ava';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunningInstance } from '../../../src/app/instance.ts';
import { type EmbeddedDatabase, openEmbeddedDatabase } from '../../../src/platform/db/embedded.ts';
import { migrateUp } from '../../../src/platform/db/migrations.ts';
import { createPool } from '../../../src/platform/db/pool.ts';
import { waitFor } from '../../support/cluster.ts';
import { getJson, sendJson } from '../../support/http.ts';
import { startTestInstance } from '../../support/instance.ts';
import { accountWithToken, bearer } from '../../support/tokens.ts';

// This file stops its database on purpose, so it runs its own server rather than the shared one.
const dataDir = mkdtempSync(join(tmpdir(), 'backplane-settings-outage-'));
chmodSync(dataDir, 0o755);
let server: EmbeddedDatabase;
let instance: RunningInstance;
let admin: Record<string, string>;

test.before(async () => {
  server = await openEmbeddedDatabase({ dataDir, fast: true });
  const pool = createPool({ connectionString: server.url, max: 2, applicationName: 'test' });
  await migrateUp(pool);
  admin = bearer((await accountWithToken(pool, { roles: ['platform_admin'] })).token);
  await pool.end();
  instance = await startTestInstance(server.url);
});

test.after.always(async () => {
  await instance?.drain();
  await server?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

test.serial('with the database down, settings and maintenance mode keep their last known values', async (t) => {
  const on = await sendJson('PUT', `${instance.url}/ops/settings/maintenance.message`, { value: 'back at noon', reason: 'upgrade' }, admin);
  t.is(on.status, 200);
  t.is((await sendJson('PUT', `${instance.url}/ops/settings/maintenance.enabled`, { value: true, reason: 'upgrade' }, admin)).status, 200);

  await server.stop();
  await waitFor(async () => ((await fetch(`${instance.url}/readyz`)).status === 503 ? true : undefined), 5_000, 'the outage to show');

  const refused = await fetch(`${instance.url}/products`);
  t.is(refused.status, 503);
  t.is(((await refused.json()) as any).detail, 'back at noon');
  const settings = await getJson(`${instance.url}/ops/settings/maintenance.enabled`, admin);
  t.is(settings.status, 200);
  t.like(settings.body, { value: true, version: 1 });
});
