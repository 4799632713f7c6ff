import test from 'ava';
import pg from 'pg';
import type { RunningInstance } from '../../src/app/instance.ts';
import { DATABASE_UNREACHABLE, MIGRATIONS_UNREADABLE } from '../../src/modules/health/system.ts';
import { waitFor } from '../support/cluster.ts';
import { startTestInstance } from '../support/instance.ts';
import { validateSystem } from '../support/problems.ts';
import { type StoppableDatabase, startStoppableDatabase } from '../support/stoppableDatabase.ts';
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

const describe = async () => {
  const response = await fetch(`${instance.url}/ops/system`, { headers: bearer(token) });
  const body = (await response.json()) as any;
  return { status: response.status, body };
};

test.serial('when only the migration read fails, the database check entry says so, and the last counts read are shown with their time', async (t) => {
  const healthy = (await describe()).body;
  t.is(healthy.database.status, 'ok');
  const known = healthy.database.migrations;
  t.is(known.current, known.latest);
  t.false(Number.isNaN(Date.parse(known.read_at)));

  const blocker = new pg.Client({ connectionString: server.url });
  await blocker.connect();
  try {
    await blocker.query('begin');
    await blocker.query('lock table schema_migrations in access exclusive mode');
    const { status, body } = await describe();
    t.is(status, 200);
    t.true(validateSystem(body), JSON.stringify(validateSystem.errors));
    t.like(body.database, { status: 'error', error: MIGRATIONS_UNREADABLE });
    t.like(body.database.migrations, { current: known.current, latest: known.latest, pending: known.pending, read_at: known.read_at });
    t.like(
      body.checks.find((check: { name: string }) => check.name === 'database'),
      { status: 'error', error: MIGRATIONS_UNREADABLE, last_ok_at: known.read_at },
    );
    t.true(body.database.ping_ms >= 0);
  } finally {
    await blocker.query('rollback');
    await blocker.end();
  }
  const recovered = (await describe()).body;
  t.is(recovered.database.status, 'ok');
  t.true(Date.parse(recovered.database.migrations.read_at) > Date.parse(known.read_at));
  t.like(
    recovered.checks.find((check: { name: string }) => check.name === 'database'),
    { status: 'ok' },
  );
});

test.serial('with the database down, the migration counts are the last ones read with their time, not zeros', async (t) => {
  const known = (await describe()).body.database.migrations;
  await server.stop();
  try {
    const { status, body } = await describe();
    t.is(status, 200);
    t.true(validateSystem(body), JSON.stringify(validateSystem.errors));
    t.like(body.database, { status: 'error', error: DATABASE_UNREACHABLE });
    t.deepEqual(body.database.migrations, known);
    t.true(known.current > 0);
    const check = body.checks.find((entry: { name: string }) => entry.name === 'database');
    t.is(check.status, 'error');
    t.false(Number.isNaN(Date.parse(check.last_ok_at)));
    t.is(body.database.ping_ms, check.duration_ms);
  } finally {
    await server.restart();
  }
  await waitFor(async () => ((await describe()).body.database.status === 'ok' ? true : undefined), 10_000, 'the database to answer again');
  t.pass();
});
