import test from 'ava';
import pg from 'pg';
import { DEFAULT_BATCH_BOUNDS } from '../../../src/modules/retention/index.ts';
import { type TestCluster, startCluster, waitFor } from '../../support/cluster.ts';
import { type TestDatabase, createTestDatabase } from '../../support/database.ts';

// Issue 30 item 10: an instance killed in the middle of a purge, the run taken over by another.
let db: TestDatabase;
let cluster: TestCluster;
let holder: pg.Client;

const FIRST_BATCH = DEFAULT_BATCH_BOUNDS.initial;
const EXPIRED = FIRST_BATCH * 3;
// Batches are deleted oldest first: this row is in the second batch, whatever its size (at least half the first).
const HELD_AT = FIRST_BATCH * 1.5;
const HOLD_KEY = 30_010;

test.before(async () => {
  db = await createTestDatabase();
  await db.pool.query(`select ensure_audit_event_partitions(now() - interval '16 months', now())`);
  // A few rows in whole expired months (detached, counted, dropped) and many before partitioning began (batches).
  await db.pool.query(`
    insert into audit_events (occurred_at, actor_kind, action, outcome, resource_type, resource_id)
    select now() - make_interval(days => 400 + n * 10), 'system', 'test.expired', 'success', 'test', 'month'
    from generate_series(1, 12) as n`);
  await db.pool.query(
    `insert into audit_events (occurred_at, actor_kind, action, outcome, resource_type, resource_id)
     select timestamptz '2000-01-01 00:00:00+00' + make_interval(secs => n), 'system', 'test.expired', 'success', 'test',
            case when n = $2 then 'held' else 'batch' end
     from generate_series(1, $1::int) as n`,
    [EXPIRED, HELD_AT],
  );
  await db.pool.query(`
    insert into audit_events (actor_kind, action, outcome, resource_type, resource_id)
    select 'system', 'test.kept', 'success', 'test', 'recent' from generate_series(1, 10)`);
  // The batch that reaches the held row waits (past the purge's 1 s lock_timeout) while this test holds the lock.
  await db.pool.query(`
    create function test_hold_purge() returns trigger language plpgsql as $$
    begin
      perform set_config('lock_timeout', '0', true);
      perform pg_advisory_xact_lock_shared(${HOLD_KEY});
      return old;
    end $$`);
  await db.pool.query(`
    create trigger test_hold_purge before delete on audit_events_default
      for each row when (old.resource_id = 'held') execute function test_hold_purge()`);
  holder = new pg.Client({ connectionString: db.url });
  await holder.connect();
  await holder.query('select pg_advisory_lock($1)', [HOLD_KEY]);
  cluster = await startCluster(db.url, 2, { APP_JOB_WORKERS: '1', APP_JOB_LEASE_SECONDS: '2', APP_HEARTBEAT_SECONDS: '1' });
});

test.after.always(async () => {
  await holder?.end().catch(() => undefined);
  await cluster?.stop();
  await db?.drop();
});

const count = async (sql: string, values: unknown[] = []) => Number((await db.pool.query<{ n: string }>(sql, values)).rows[0]!.n);

test.serial('rows a killed attempt deleted are audited by the attempt that takes the run over: the audit log counts every deleted row once', async (t) => {
  const before = await count(`select count(*) as n from audit_events where action = 'test.expired'`);
  t.is(before, EXPIRED + 12);
  const run = (
    await db.pool.query<{ id: string }>(
      `insert into job_runs (job, trigger, queue, max_attempts) values ('retention', 'manual', 'default', 3) returning id::text`,
    )
  ).rows[0]!.id;

  // The first attempt has committed a batch and is inside the next one: kill its instance there.
  await waitFor(
    async () =>
      (await count(
        `select count(*) as n from pg_stat_activity where application_name = 'backplane-retention' and wait_event_type = 'Lock' and wait_event = 'advisory'`,
      )) > 0
        ? true
        : undefined,
    60_000,
    'the purge to reach the held row',
  );
  const { rows } = await db.pool.query<{ pid: number; attempts: number }>(
    `select i.pid, r.attempts from job_runs r join release_instances i using (instance_id) where r.id = $1`,
    [run],
  );
  process.kill(rows[0]!.pid, 'SIGKILL');
  const remaining = () => count(`select count(*) as n from audit_events where action = 'test.expired'`);
  // Its held batch is not committed: what is gone is what the killed attempt committed.
  const deletedByKilled = before - (await remaining());
  t.true(deletedByKilled >= FIRST_BATCH, `${deletedByKilled} rows deleted before the kill`);
  // Its session finishes the held batch into a closed connection, so the batch rolls back.
  await holder.query('select pg_advisory_unlock($1)', [HOLD_KEY]);

  const done = await waitFor(
    async () => {
      const state = (await db.pool.query<{ state: string; attempts: number }>('select state, attempts from job_runs where id = $1', [run])).rows[0]!;
      return state.state === 'succeeded' || state.state === 'failed' ? state : undefined;
    },
    90_000,
    'the run to be taken over and finish',
  );
  t.is(done.state, 'succeeded');
  t.true(done.attempts > rows[0]!.attempts);

  const deleted = before - (await remaining());
  t.is(deleted, EXPIRED + 12);
  t.is(await count(`select count(*) as n from audit_events where action = 'test.kept'`), 10);
  const events = (
    await db.pool.query<{ metadata: { rows: number; earlier_rows: number } }>(
      `select metadata from audit_events where action = 'retention.purged' and resource_id = 'audit_events' order by id`,
    )
  ).rows;
  // What the audit log says was deleted is what was deleted.
  t.is(
    events.reduce((sum, event) => sum + event.metadata.rows, 0),
    deleted,
  );
  t.true(events.at(-1)!.metadata.earlier_rows >= deletedByKilled);
  t.is(await count(`select count(*) as n from purge_ledger`), 0);
});
