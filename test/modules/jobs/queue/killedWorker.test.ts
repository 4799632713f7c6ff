import test from 'ava';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { addJobs } from '../../../../src/modules/jobs/queue/addJobs.ts';
import { startQueueWorker } from '../../../../src/modules/jobs/queue/worker.ts';
import { createNotificationListener } from '../../../../src/platform/db/listener.ts';
import { createLogger } from '../../../../src/platform/logging/logger.ts';
import { waitFor } from '../../../support/cluster.ts';
import { type TestDatabase, createTestDatabase } from '../../../support/database.ts';
import { countingTasks } from './fixtures/countingTasks.ts';

const JOBS = 1_500;
const logger = createLogger('silent');
let db: TestDatabase;

test.before(async () => {
  db = await createTestDatabase();
  await db.pool.query('create table handled (job_id bigint not null)');
});

test.after.always(async () => {
  await db?.drop();
});

const count = async (sql: string) => (await db.pool.query<{ n: number }>(sql)).rows[0]!.n;

test('a transactional task’s writes happen once per job when the instance running it is killed -9 mid-run', async (t) => {
  const ids = (
    await addJobs(
      db.pool,
      countingTasks,
      Array.from({ length: JOBS }, (_, n) => ({ task: 'counted_once' as const, payload: { n } })),
    )
  ).map((job) => job.id!);
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('fixtures/killableWorker.ts', import.meta.url)), db.url, 'instance-killed'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    await once(child.stdout, 'data');
    // Whenever the kill lands (between two jobs, mid-transaction, mid-commit), the invariant holds.
    await waitFor(
      async () => ((await count('select count(*)::int as n from handled')) >= 100 ? true : undefined),
      60_000,
      'the first instance to make progress',
    );
  } finally {
    child.kill('SIGKILL');
  }
  await once(child, 'exit');
  const runningWhenKilled = await count(`select count(*)::int as n from queue_jobs where state = 'running'`);

  const listener = createNotificationListener(db.url, logger);
  const survivor = startQueueWorker({
    pool: db.pool,
    listener,
    tasks: countingTasks,
    logger,
    runTask: () => Promise.reject(new Error('unused')),
    instanceId: 'instance-survivor',
    concurrency: { default: 3 },
    leaseSeconds: 2,
    pollMs: 200,
  });
  try {
    await waitFor(
      async () => ((await count(`select count(*)::int as n from queue_jobs where state = 'completed'`)) === JOBS ? true : undefined),
      120_000,
      'every job to complete',
    );
  } finally {
    await survivor.drain(1_000);
    await listener.close();
  }
  const { rows } = await db.pool.query<{ runs: number; jobs: number }>(
    'select count(*)::int as runs, count(distinct job_id)::int as jobs from handled where job_id = any($1::bigint[])',
    [ids],
  );
  t.deepEqual(rows[0], { runs: JOBS, jobs: JOBS }, `0 lost, 0 twice (${runningWhenKilled} jobs were running at the kill)`);
});
