import test from 'ava';
import { type StoppableDatabase, startStoppableDatabase } from '../support/stoppableDatabase.ts';
import type { RunningInstance } from '../../src/app/instance.ts';
import { DATABASE_UNREACHABLE } from '../../src/modules/health/system.ts';
import { waitFor } from '../support/cluster.ts';
import { startTestInstance } from '../support/instance.ts';
import { assertProblem, validateSystem } from '../support/problems.ts';
import { accountWithToken, bearer } from '../support/tokens.ts';

// This file stops and freezes its database on purpose, so it runs its own server rather than the shared one.
let server: StoppableDatabase;
let instance: RunningInstance;
/** An instance whose operator opted in: the database check fails its readiness too. */
let strict: RunningInstance;
let token: string;

test.before(async () => {
  server = await startStoppableDatabase(async (pool) => {
    token = (await accountWithToken(pool, { roles: ['ops_viewer'] })).token;
  });
  instance = await startTestInstance(server.url, { APP_REQUEST_DEADLINE_SECONDS: '2' });
  strict = await startTestInstance(server.url, { APP_READINESS_REQUIRES_DATABASE: '1' });
});

test.after.always(async () => {
  // A failed test may leave the server frozen: drain and removal need it answering.
  server?.thaw();
  await instance?.drain();
  await strict?.drain();
  await server?.remove();
});

type Check = { name: string; status: string };

const verbose = async (url: string) => {
  const response = await fetch(`${url}/readyz?verbose`);
  return { status: response.status, body: (await response.json()) as { status: string; checks: Check[] } };
};

const databaseFailing = (checks: Check[]) => checks.some((check) => check.name === 'database' && check.status === 'error');

test.serial('ready, every instance check is listed and passes', async (t) => {
  const { status, body } = await verbose(instance.url);
  t.is(status, 200);
  t.deepEqual(
    body.checks.filter((check) => ['database', 'event_loop', 'pool'].includes(check.name)).map((check) => [check.name, check.status]),
    [
      ['database', 'ok'],
      ['event_loop', 'ok'],
      ['pool', 'ok'],
    ],
  );
});

test.serial(
  'with the database frozen /readyz stays 200 listing the failure, /ops/system answers, a database route is 503; opted in, /readyz is 503',
  async (t) => {
    t.is((await fetch(`${instance.url}/ops/audit`, { headers: bearer(token) })).status, 200);
    server.freeze();
    try {
      const listed = await waitFor(
        async () => {
          const answer = await verbose(instance.url);
          return databaseFailing(answer.body.checks) ? answer : undefined;
        },
        10_000,
        'readiness to list the database failing',
      );
      t.is(listed.status, 200);
      t.is(listed.body.status, 'ok');
      t.is((await fetch(`${instance.url}/readyz`)).status, 200);

      const system = await fetch(`${instance.url}/ops/system`, { headers: bearer(token) });
      t.is(system.status, 200);
      const body = (await system.json()) as any;
      t.true(validateSystem(body), JSON.stringify(validateSystem.errors));
      t.like(body.database, { status: 'error', error: DATABASE_UNREACHABLE });
      // The seed keeps the two lists equal: /ops/system's checks are /readyz's.
      t.deepEqual(
        body.checks.map((check: Check) => check.name),
        listed.body.checks.map((check) => check.name),
      );

      // Bounded by the 2 s deadline; the generous bound only says it does not wait for the thaw.
      const sent = performance.now();
      await assertProblem(t, await fetch(`${instance.url}/ops/audit`, { headers: bearer(token) }), 503, 'database_unavailable');
      t.true(performance.now() - sent < 15_000);

      await waitFor(async () => ((await fetch(`${strict.url}/readyz`)).status === 503 ? true : undefined), 10_000, 'the opted-in instance to be unready');
      const strictBody = await verbose(strict.url);
      t.is(strictBody.status, 503);
      t.is(strictBody.body.status, 'unavailable');
      t.true(databaseFailing(strictBody.body.checks));
      t.is((await fetch(`${strict.url}/livez`)).status, 200);
    } finally {
      server.thaw();
    }
    await waitFor(async () => ((await fetch(`${strict.url}/readyz`)).status === 200 ? true : undefined), 20_000, 'the opted-in instance to be ready again');
    const recovered = await waitFor(
      async () => {
        const answer = await verbose(instance.url);
        return databaseFailing(answer.body.checks) ? undefined : answer;
      },
      20_000,
      'the database check to pass again',
    );
    t.is(recovered.status, 200);
  },
);

test.serial('with the database stopped /ops/system is 200 with the failure inside; both recover', async (t) => {
  await server.stop();
  try {
    const response = await fetch(`${instance.url}/ops/system`, { headers: bearer(token) });
    t.is(response.status, 200);
    const body = (await response.json()) as any;
    t.true(validateSystem(body), JSON.stringify(validateSystem.errors));
    t.is(body.database.status, 'error');
    t.is(body.database.error, DATABASE_UNREACHABLE);
    t.is(body.checks[0].status, 'error');
    t.false(JSON.stringify(body).includes('ECONNREFUSED'));
    t.is((await fetch(`${instance.url}/readyz`)).status, 200);
    await waitFor(async () => ((await fetch(`${strict.url}/readyz`)).status === 503 ? true : undefined), 10_000, 'the opted-in instance to be unready');
  } finally {
    await server.restart();
  }
  await waitFor(async () => ((await fetch(`${strict.url}/readyz`)).status === 200 ? true : undefined), 10_000, 'readyz 200');
  const recovered = (await (await fetch(`${instance.url}/ops/system`, { headers: bearer(token) })).json()) as any;
  t.is(recovered.database.status, 'ok');
  t.is(recovered.database.error, undefined);
});
