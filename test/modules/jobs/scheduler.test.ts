import test from 'ava';
import { createNotificationListener } from '../../../src/platform/db/listener.ts';
import { createLogger } from '../../../src/platform/logging/logger.ts';
import { createJobRegistry, type JobDefinition } from '../../../src/modules/jobs/definitions.ts';
import { startJobScheduler } from '../../../src/modules/jobs/scheduler.ts';
import { sleep } from '../../../src/platform/time.ts';
import { waitFor } from '../../support/cluster.ts';
import { type TestDatabase, createTestDatabase } from '../../support/database.ts';

const logger = createLogger('silent');
let db: TestDatabase;

const job = (name: string, schedule: string, extra: Partial<JobDefinition> = {}): JobDefinition => ({
  name,
  description: 'test',
  schedule,
  timeoutSeconds: 10,
  maxAttempts: 1,
  handler: async () => undefined,
  ...extra,
});

/** Runs a scheduler (no workers, so runs stay queued) over the given jobs for the duration of work. */
async function withScheduler(definitions: JobDefinition[], work: () => Promise<unknown>): Promise<void> {
  const listener = createNotificationListener(db.url, logger);
  const scheduler = startJobScheduler({ db: db.pool, listener, jobs: createJobRegistry(definitions), logger });
  try {
    await work();
  } finally {
    await scheduler.stop();
    await listener.close();
  }
}

const runsOf = async (name: string) =>
  (await db.pool.query<{ slot: Date; state: string; trigger: string }>('select slot, state, trigger from job_runs where job = $1 order by id', [name])).rows;

test.before(async () => {
  db = await createTestDatabase();
});

test.after.always(async () => {
  await db?.drop();
});

test('after downtime over many slots, one catch-up run for the latest slot, not one per missed slot', async (t) => {
  await db.pool.query(`insert into job_definitions (name, scheduled_since) values ('catch_up', now() - interval '10 minutes')`);
  await withScheduler([job('catch_up', '@every 1m')], async () => {
    await waitFor(async () => ((await runsOf('catch_up')).length > 0 ? true : undefined), 5_000, 'the catch-up run');
    await sleep(1_500);
  });
  const runs = await runsOf('catch_up');
  t.is(runs.length, 1);
  const { rows } = await db.pool.query<{ minute: Date }>(`select date_trunc('minute', now()) as minute`);
  t.true(runs[0]!.slot.getTime() === rows[0]!.minute.getTime() || runs[0]!.slot.getTime() === rows[0]!.minute.getTime() - 60_000);
  t.is(runs[0]!.trigger, 'schedule');
});

test('a job seen for the first time does not run the slot that fell before it existed', async (t) => {
  await withScheduler([job('brand_new', '@every 1h')], async () => {
    await waitFor(
      async () => ((await db.pool.query(`select 1 from job_definitions where name = 'brand_new'`)).rowCount === 1 ? true : undefined),
      5_000,
      'the job to be known',
    );
    await sleep(1_500);
  });
  t.is((await runsOf('brand_new')).length, 0);
});

test('a disabled job gets no slots', async (t) => {
  await withScheduler([job('off_by_default', '@every 1s', { enabled: false })], () => sleep(2_500));
  t.is((await runsOf('off_by_default')).length, 0);
});

test('while a run waits in the queue, later slots are skipped rather than piled up', async (t) => {
  await withScheduler([job('busy', '@every 1s')], () => sleep(3_500));
  const runs = await runsOf('busy');
  t.is(runs.length, 1);
  t.is(runs[0]!.state, 'queued');
});

test('a run whose instance died on its last attempt fails once its lease has expired', async (t) => {
  const { rows } = await db.pool.query<{ id: string }>(
    `insert into job_runs (job, trigger, queue, state, attempts, max_attempts, instance_id, started_at, lease_expires_at)
     values ('abandoned', 'manual', 'default', 'running', 1, 1, 'gone', now() - interval '1 minute', now() - interval '1 second')
     returning id::text`,
  );
  await withScheduler([job('abandoned', '0 0 1 1 *')], () =>
    waitFor(
      async () => {
        const run = await db.pool.query<{ state: string }>('select state from job_runs where id = $1', [rows[0]!.id]);
        return run.rows[0]!.state === 'failed' ? true : undefined;
      },
      10_000,
      'the abandoned run to fail',
    ),
  );
  const run = await db.pool.query<{ error: string; finished_at: Date | null; lease_expires_at: Date | null }>(
    'select error, finished_at, lease_expires_at from job_runs where id = $1',
    [rows[0]!.id],
  );
  t.regex(run.rows[0]!.error, /^lease_expired:/);
  t.truthy(run.rows[0]!.finished_at);
  t.is(run.rows[0]!.lease_expires_at, null);
});

test('slots are computed on the database clock: slot instants are whole seconds, never ahead of it', async (t) => {
  await withScheduler([job('clocked', '@every 1s')], () => waitFor(async () => ((await runsOf('clocked')).length > 0 ? true : undefined), 5_000, 'a slot'));
  const { rows } = await db.pool.query<{ ahead: boolean; whole: boolean }>(
    `select slot > created_at as ahead, slot = date_trunc('second', slot) as whole from job_runs where job = 'clocked'`,
  );
  t.false(rows[0]!.ahead);
  t.true(rows[0]!.whole);
});

test('between slots an idle scheduler reads the definitions when notified, not once a second', async (t) => {
  const statements: string[] = [];
  const counting = {
    query: ((text: string, values?: unknown[]) => {
      statements.push(text);
      return db.pool.query(text, values);
    }) as typeof db.pool.query,
  };
  const listener = createNotificationListener(db.url, logger);
  const scheduler = startJobScheduler({ db: counting, listener, jobs: createJobRegistry([job('hourly_idle', '@every 1h')]), logger });
  const reads = () => statements.filter((text) => text.includes('left join job_definitions')).length;
  try {
    // The first tick, and the one the listener's connection makes (it may have missed a change).
    await waitFor(async () => (listener.connected && reads() > 0 ? true : undefined), 5_000, 'the first tick');
    await listener.listening();
    await sleep(500);
    const settled = reads();
    await sleep(3_000);
    t.is(reads(), settled, 'no tick between slots an hour apart');
    await db.pool.query(`select pg_notify('backplane_job_definitions', 'hourly_idle')`);
    await waitFor(async () => (reads() > settled ? true : undefined), 5_000, 'a tick on the notification');
  } finally {
    await scheduler.stop();
    await listener.close();
  }
  t.pass();
});

test('the running instances share the sweep of abandoned runs: each sweeps about every interval times their count', async (t) => {
  const sweepsBy = async (runningInstances: number) => {
    const at: number[] = [];
    const counting = {
      query: ((text: string, values?: unknown[]) => {
        if (text.includes('lease_expired')) {
          at.push(performance.now());
        }
        return db.pool.query(text, values);
      }) as typeof db.pool.query,
    };
    const listener = createNotificationListener(db.url, logger);
    const scheduler = startJobScheduler({
      db: counting,
      listener,
      jobs: createJobRegistry([job(`hourly_sweep_${runningInstances}`, '@every 1h')]),
      logger,
      sweepEveryMs: 40,
      runningInstances: () => runningInstances,
    });
    await waitFor(async () => (at.length > 0 ? true : undefined), 5_000, 'the first sweep');
    await sleep(1_500);
    await scheduler.stop();
    await listener.close();
    return at;
  };
  // Alone: every 20-60 ms; a slow machine only makes fewer.
  t.true((await sweepsBy(1)).length >= 3);
  // One of 50: at least 1 s apart (timers never fire early), so one or two in 1.5 s.
  const shared = await sweepsBy(50);
  t.true(shared.length <= 2, `${shared.length} sweeps`);
  t.true(shared.length < 2 || shared[1]! - shared[0]! >= 999);
});
