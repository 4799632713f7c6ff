import test from 'ava';
import { type StoppableDatabase, startStoppableDatabase } from '../../support/stoppableDatabase.ts';
import type { RunningInstance } from '../../../src/app/instance.ts';
import { waitFor } from '../../support/cluster.ts';
import { getJson, sendJson } from '../../support/http.ts';
import { startTestInstance } from '../../support/instance.ts';
import { accountWithToken, bearer } from '../../support/tokens.ts';

// This file stops its database on purpose, so it runs its own server rather than the shared one.
let server: StoppableDatabase;
let instance: RunningInstance;
let admin: Record<string, string>;

test.before(async () => {
  server = await startStoppableDatabase(async (pool) => {
    admin = bearer((await accountWithToken(pool, { roles: ['platform_admin'] })).token);
  });
  instance = await startTestInstance(server.url);
});

test.after.always(async () => {
  await instance?.drain();
  await server?.remove();
});

test.serial('with the database down, settings and maintenance mode keep their last known values', async (t) => {
  const on = await sendJson('PUT', `${instance.url}/ops/settings/maintenance.message`, { value: 'back at noon', reason: 'upgrade' }, admin);
  t.is(on.status, 200);
  t.is((await sendJson('PUT', `${instance.url}/ops/settings/maintenance.enabled`, { value: true, reason: 'upgrade' }, admin)).status, 200);

  await server.stop();
  await waitFor(
    async () => {
      const body = (await (await fetch(`${instance.url}/readyz?verbose`)).json()) as { checks: Array<{ name: string; status: string }> };
      return body.checks.some((check) => check.name === 'database' && check.status === 'error') ? true : undefined;
    },
    5_000,
    'the outage to show',
  );

  const refused = await fetch(`${instance.url}/products`);
  t.is(refused.status, 503);
  t.is(((await refused.json()) as any).detail, 'back at noon');
  const settings = await getJson(`${instance.url}/ops/settings/maintenance.enabled`, admin);
  t.is(settings.status, 200);
  t.like(settings.body, { value: true, version: 1 });
});
