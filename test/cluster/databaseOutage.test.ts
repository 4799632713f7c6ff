import test from 'ava';
import { type StoppableDatabase, startStoppableDatabase } from '../support/stoppableDatabase.ts';
import type { RunningInstance } from '../../src/app/instance.ts';
import { DATABASE_UNREACHABLE } from '../../src/modules/health/system.ts';
import { waitFor } from '../support/cluster.ts';
import { startTestInstance } from '../support/instance.ts';
import { validateSystem } from '../support/problems.ts';
import { accountWithToken, bearer } from '../support/tokens.ts';

// This file stops its database on purpose, so it runs its own server rather than the shared one.
let server: StoppableDatabase;
let instance: RunningInstance;
let token: string;

test.before(async () => {
  server = await startStoppableDatabase(async (pool) => {
    token = (await accountWithToken(pool, { roles: ['ops_viewer'] })).token;
  });
  instance = await startTestInstance(server.url);
});

test.after.always(async () => {
  await instance?.drain();
  await server?.remove();
});

test.serial('with the database down /ops/system is 200 with the failure inside; /readyz is 503; both recover', async (t) => {
  await server.stop();

  const response = await fetch(`${instance.url}/ops/system`, { headers: bearer(token) });
  t.is(response.status, 200);
  const body = (await response.json()) as any;
  t.true(validateSystem(body), JSON.stringify(validateSystem.errors));
  t.is(body.database.status, 'error');
  t.is(body.database.error, DATABASE_UNREACHABLE);
  t.is(body.checks[0].status, 'error');
  t.false(JSON.stringify(body).includes('ECONNREFUSED'));

  await waitFor(async () => ((await fetch(`${instance.url}/readyz`)).status === 503 ? true : undefined), 5_000, 'readyz 503');
  const verbose = (await (await fetch(`${instance.url}/readyz?verbose`)).json()) as any;
  t.is(verbose.status, 'unavailable');
  t.is((await fetch(`${instance.url}/livez`)).status, 200);

  await server.restart();
  await waitFor(async () => ((await fetch(`${instance.url}/readyz`)).status === 200 ? true : undefined), 10_000, 'readyz 200');
  const recovered = (await (await fetch(`${instance.url}/ops/system`, { headers: bearer(token) })).json()) as any;
  t.is(recovered.database.status, 'ok');
  t.is(recovered.database.error, undefined);
});
