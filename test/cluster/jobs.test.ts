import test from 'ava';
import { sleep } from '../../src/platform/time.ts';
import { type TestCluster, startCluster, waitFor } from '../support/cluster.ts';
import { type TestDatabase, createTestDatabase } from '../support/database.ts';
import { accountWithToken, bearer } from '../support/tokens.ts';

let db: TestDatabase;
let cluster: TestCluster;
let token: string;

test.before(async () => {
  db = await createTestDatabase();
  token = (await accountWithToken(db.pool, { roles: ['platform_admin'] })).token;
  cluster = await startCluster(db.url, 3, { APP_TEST_JOBS: '1', APP_JOB_LEASE_SECONDS: '2', APP_HEARTBEAT_SECONDS: '1' });
});

test.after.always(async () => {
  await cluster?.stop();
  await db?.drop();
});

const databaseNow = async () => (await db.pool.query<{ now: Date }>('select now()')).rows[0]!.now;

test.serial('three processes, an every-second job: exactly one run per slot, none missing', async (t) => {
  const start = await databaseNow();
  await sleep(6_000);
  const end = await databaseNow();
  const { rows } = await db.pool.query<{ slot: Date; runs: number; instance_id: string }>(
    `select slot, count(*)::int as runs, min(instance_id) as instance_id from job_runs
     where job = 'test_tick' and slot > $1 and slot < $2::timestamptz - interval '1 second' group by slot order by slot`,
    [start, end],
  );
  t.true(rows.length >= 4, `only ${rows.length} slots`);
  t.true(rows.every((row) => row.runs === 1));
  for (let i = 1; i < rows.length; i += 1) {
    t.is(rows[i]!.slot.getTime() - rows[i - 1]!.slot.getTime(), 1_000, `gap before ${rows[i]!.slot.toISOString()}`);
  }
  const running = await db.pool.query<{ instance_id: string }>('select instance_id from release_instances where stopped_at is null');
  const ids = new Set(running.rows.map((row) => row.instance_id));
  t.true(rows.every((row) => ids.has(row.instance_id)));
});

test.serial('an instance killed while holding a run: another instance takes it over after the lease and completes it', async (t) => {
  const accepted = await fetch(`${cluster.url}/ops/jobs/definitions/test_hold/run`, { method: 'POST', headers: bearer(token) });
  t.is(accepted.status, 202);
  const { id } = (await accepted.json()) as { id: string };
  const holder = await waitFor(
    async () => {
      const { rows } = await db.pool.query<{ state: string; instance_id: string }>('select state, instance_id from job_runs where id = $1', [id]);
      return rows[0]!.state === 'running' ? rows[0]!.instance_id : undefined;
    },
    10_000,
    'the run to start',
  );
  const { rows } = await db.pool.query<{ pid: number }>('select pid from release_instances where instance_id = $1', [holder]);
  process.kill(rows[0]!.pid, 'SIGKILL');

  const done = await waitFor(
    async () => {
      const run = await db.pool.query<{ state: string; instance_id: string; attempts: number }>(
        'select state, instance_id, attempts from job_runs where id = $1',
        [id],
      );
      return run.rows[0]!.state === 'succeeded' ? run.rows[0]! : undefined;
    },
    20_000,
    'another instance to complete the run',
  );
  t.not(done.instance_id, holder);
  t.is(done.attempts, 2);
});
