import test from 'ava';
import { DatabaseUnavailableError, withDatabaseDeadline, withDeadlineAt } from '../../../src/platform/db/deadline.ts';
import { createPool } from '../../../src/platform/db/pool.ts';
import { withTransaction } from '../../../src/platform/db/transaction.ts';
import { databaseUnavailableReason } from '../../../src/platform/db/unavailable.ts';
import { type TestDatabase, createTestDatabase } from '../../support/database.ts';

let db: TestDatabase;

test.before(async () => {
  db = await createTestDatabase();
  await db.pool.query('create table deadline_marks (mark text not null)');
});

test.after.always(async () => {
  await db?.drop();
});

const marks = async (mark: string) =>
  Number((await db.pool.query<{ n: string }>('select count(*) as n from deadline_marks where mark = $1', [mark])).rows[0]!.n);

test.serial('a statement still running at the deadline fails as unavailable and its connection is destroyed, not reused', async (t) => {
  const error = await t.throwsAsync(withDatabaseDeadline(300, () => db.pool.query('select pg_sleep(30)')));
  t.true(error instanceof DatabaseUnavailableError);
  t.is(databaseUnavailableReason(error), 'deadline');
  // Had the connection gone back, this would wait behind the sleep (or read its answer).
  t.is((await withDatabaseDeadline(5_000, () => db.pool.query('select 1 as one'))).rows[0].one, 1);
});

test.serial('a transaction that runs out of its deadline commits nothing, not even its earlier statements', async (t) => {
  const error = await t.throwsAsync(
    withDatabaseDeadline(300, () =>
      withTransaction(db.pool, async (tx) => {
        await tx.query(`insert into deadline_marks (mark) values ('late')`);
        await tx.query('select pg_sleep(30)');
      }),
    ),
  );
  t.is(databaseUnavailableReason(error), 'deadline');
  t.is(await marks('late'), 0);
});

test.serial('once the deadline is spent, later statements of the request are refused at once, commit included', async (t) => {
  await t.throwsAsync(
    withDatabaseDeadline(300, async () => {
      await t.throwsAsync(db.pool.query('select pg_sleep(30)'));
      await withTransaction(db.pool, (tx) => tx.query(`insert into deadline_marks (mark) values ('after')`));
    }),
  );
  t.is(await marks('after'), 0);
});

test.serial('the deadline counts from its start, work between statements included: a statement after it is refused, nothing commits', async (t) => {
  const error = await t.throwsAsync(
    withDatabaseDeadline(300, () =>
      withTransaction(db.pool, async (tx) => {
        await tx.query(`insert into deadline_marks (mark) values ('slow hash')`);
        // A slow password hash or a limiter's wait between statements spends the request's one deadline too (issue 30 item 9).
        await new Promise((resolve) => setTimeout(resolve, 500));
        await tx.query(`insert into deadline_marks (mark) values ('slow hash')`);
      }),
    ),
  );
  t.is(databaseUnavailableReason(error), 'deadline');
  t.is(await marks('slow hash'), 0);
});

test.serial('a request deadline ends at its instant: work started past it is refused at once', async (t) => {
  const error = await t.throwsAsync(withDeadlineAt(performance.now() - 1, () => db.pool.query('select 1')));
  t.is(databaseUnavailableReason(error), 'deadline');
  t.is((await withDeadlineAt(performance.now() + 5_000, () => db.pool.query('select 1 as one'))).rows[0].one, 1);
});

test.serial('work within its deadline commits as usual; work outside any deadline is not bounded', async (t) => {
  await withDatabaseDeadline(10_000, () => withTransaction(db.pool, (tx) => tx.query(`insert into deadline_marks (mark) values ('kept')`)));
  t.is(await marks('kept'), 1);
  t.is((await db.pool.query('select 2 as two from pg_sleep(0.4)')).rows[0].two, 2);
});

test.serial('waiting for a connection ends at the deadline; the connection that comes later goes back to the pool', async (t) => {
  const held = await Promise.all(Array.from({ length: db.pool.options.max }, () => db.pool.connect()));
  try {
    const error = await t.throwsAsync(withDatabaseDeadline(200, () => db.pool.query('select 1')));
    t.is(databaseUnavailableReason(error), 'deadline');
  } finally {
    for (const client of held) {
      client.release();
    }
  }
  t.is((await db.pool.query('select 1 as one')).rows[0].one, 1);
  t.is(db.pool.waitingCount, 0);
});

test.serial('a checkout given up at the deadline is not touched again when the pool gives up on it later', async (t) => {
  const pool = createPool({ connectionString: db.url, max: 1, applicationName: 'backplane-test', acquireTimeoutMs: 400 });
  const held = await pool.connect();
  try {
    const error = await t.throwsAsync(withDatabaseDeadline(100, () => pool.query('select 1')));
    t.is(databaseUnavailableReason(error), 'deadline');
    // pg-pool's own acquire timeout fires for the same checkout at 400 ms, with no connection.
    await new Promise((resolve) => setTimeout(resolve, 600));
  } finally {
    held.release();
  }
  t.is((await pool.query('select 1 as one')).rows[0].one, 1);
  await pool.end();
});

test('outage errors are told apart from other failures', (t) => {
  const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });
  t.is(databaseUnavailableReason(withCode('ECONNREFUSED')), 'econnrefused');
  t.is(databaseUnavailableReason(withCode('08006')), 'connection_exception');
  t.is(databaseUnavailableReason(withCode('57P01')), 'admin_shutdown');
  t.is(databaseUnavailableReason(withCode('57P03')), 'cannot_connect_now');
  t.is(databaseUnavailableReason(withCode('53300')), 'too_many_connections');
  t.is(databaseUnavailableReason(new Error('timeout exceeded when trying to connect')), 'acquire_timeout');
  t.is(databaseUnavailableReason(new Error('Connection terminated unexpectedly')), 'connection_lost');
  t.is(databaseUnavailableReason(new Error('Query read timeout')), 'query_timeout');
  t.is(databaseUnavailableReason(new Error('wrapped', { cause: withCode('ECONNRESET') })), 'econnreset');
  t.is(databaseUnavailableReason(new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')])), 'econnrefused');
  // A module's own statement timeout, a constraint or a bug are not an outage.
  t.is(databaseUnavailableReason(withCode('57014')), undefined);
  t.is(databaseUnavailableReason(withCode('23505')), undefined);
  t.is(databaseUnavailableReason(new TypeError('undefined is not a function')), undefined);
  t.is(databaseUnavailableReason('ECONNREFUSED'), undefined);
});
