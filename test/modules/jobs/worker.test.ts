import test from 'ava';
import { setTimeout as delay } from 'node:timers/promises';
import client from 'prom-client';
import { createJobRegistry, type JobDefinition } from '../../../src/modules/jobs/definitions.ts';
import { createJobMetrics } from '../../../src/modules/jobs/metrics.ts';
import { startJobWorkers } from '../../../src/modules/jobs/worker.ts';
import { createNotificationListener } from '../../../src/platform/db/listener.ts';
import { createLogger } from '../../../src/platform/logging/logger.ts';
import { createTaskPool } from '../../../src/platform/tasks/pool.ts';
import { AppError } from '../../../src/platform/errors.ts';
import { defineTask } from '../../../src/platform/tasks/task.ts';
import { waitFor } from '../../support/cluster.ts';
import { type TestDatabase, createTestDatabase } from '../../support/database.ts';
import type * as fixtures from '../../platform/tasks/fixtures/tasks.ts';

const logger = createLogger('silent');
const double = defineTask<typeof fixtures.double>('test.double', import.meta.url, '../../platform/tasks/fixtures/tasks', 'double');
const ON_REQUEST = '0 0 1 1 *';
let db: TestDatabase;
let flakyCalls = 0;

const job = (name: string, handler: JobDefinition['handler'], extra: Partial<JobDefinition> = {}): JobDefinition => ({
  name,
  description: 'test',
  schedule: ON_REQUEST,
  timeoutSeconds: 30,
  maxAttempts: 3,
  handler,
  ...extra,
});

const definitions: JobDefinition[] = [
  job('uses_task', async (context) => {
    const { doubled } = await context.runTask(double, { n: 21 });
    await context.db.query('insert into test_results (run_id, value) values ($1, $2)', [context.run.id, doubled]);
  }),
  job('flaky', async () => {
    flakyCalls += 1;
    if (flakyCalls === 1) {
      throw new AppError('flaky_failure', 'the first attempt fails');
    }
  }),
  job(
    'always_fails',
    async () => {
      throw new Error('cannot reach postgres://app:hunter2@db.internal/app');
    },
    { maxAttempts: 1 },
  ),
  job('outlasts_timeout', (context) => delay(20_000, undefined, { signal: context.signal }), { timeoutSeconds: 1, maxAttempts: 1 }),
  job('holds', (context) => delay(3_000, undefined, { signal: context.signal })),
  job('quick', async () => undefined),
  job('elsewhere', async () => undefined, { queue: 'reports' }),
];

interface Worker {
  instanceId: string;
  registry: client.Registry;
  stop(drainMs: number): Promise<void>;
}

async function startWorkers(instanceId: string, options: { leaseSeconds?: number; queues?: string[] } = {}): Promise<Worker> {
  const listener = createNotificationListener(db.url, logger);
  const registry = new client.Registry();
  const tasks = createTaskPool({ threads: 1, closeTimeoutMs: 5_000, registry, logger });
  const workers = startJobWorkers({
    db: db.pool,
    listener,
    jobs: createJobRegistry(definitions),
    logger,
    metrics: createJobMetrics(registry),
    runTask: tasks.runTask,
    instanceId,
    workers: 2,
    queues: options.queues ?? ['default'],
    leaseSeconds: options.leaseSeconds ?? 30,
  });
  return {
    instanceId,
    registry,
    async stop(drainMs) {
      await workers.stop(drainMs);
      await tasks.close();
      await listener.close();
    },
  };
}

interface RunRow {
  id: string;
  state: string;
  attempts: number;
  error: string | null;
  instance_id: string | null;
  run_after: Date;
  finished_at: Date | null;
  lease_expires_at: Date | null;
}

const queueRun = async (name: string, queue = 'default') =>
  (
    await db.pool.query<{ id: string }>(`insert into job_runs (job, trigger, queue, max_attempts) values ($1, 'manual', $2, 3) returning id::text`, [
      name,
      queue,
    ])
  ).rows[0]!.id;
const readRun = async (id: string) => (await db.pool.query<RunRow>('select id::text, * from job_runs where id = $1', [id])).rows[0]!;
const untilState = (id: string, state: string, ms = 15_000) =>
  waitFor(
    async () => {
      const run = await readRun(id);
      return run.state === state ? run : undefined;
    },
    ms,
    `run ${id} to be ${state}`,
  );

let worker: Worker;

test.before(async () => {
  db = await createTestDatabase();
  await db.pool.query('create table test_results (run_id text, value integer)');
  worker = await startWorkers('instance-a');
});

test.after.always(async () => {
  await worker?.stop(1_000);
  await db?.drop();
});

test.serial('a handler gets the database and the task pool; its result is written and the run succeeds', async (t) => {
  const id = await queueRun('uses_task');
  const run = await untilState(id, 'succeeded');
  t.is(run.attempts, 1);
  t.is(run.instance_id, 'instance-a');
  t.is(run.lease_expires_at, null);
  t.truthy(run.finished_at);
  t.deepEqual((await db.pool.query('select value from test_results where run_id = $1', [id])).rows, [{ value: 42 }]);
  t.regex(await worker.registry.metrics(), /backplane_job_attempts_total\{job_name="uses_task",outcome="succeeded"\} 1/);
});

test.serial('a failed attempt waits with backoff and retries; the error summary keeps the code', async (t) => {
  const id = await queueRun('flaky');
  const waiting = await waitFor(
    async () => {
      const run = await readRun(id);
      return run.state === 'queued' && run.attempts === 1 ? run : undefined;
    },
    10_000,
    'the first attempt to fail',
  );
  t.is(waiting.error, 'flaky_failure: the first attempt fails');
  const { rows } = await db.pool.query<{ wait: number }>('select extract(epoch from run_after - now())::float as wait from job_runs where id = $1', [id]);
  t.true(rows[0]!.wait > 0 && rows[0]!.wait <= 2);
  const done = await untilState(id, 'succeeded');
  t.is(done.attempts, 2);
  t.is(done.error, null);
});

test.serial('the last failed attempt fails the run; the summary never shows a credential', async (t) => {
  const id = await queueRun('always_fails');
  await db.pool.query('update job_runs set max_attempts = 1 where id = $1', [id]);
  const run = await untilState(id, 'failed');
  t.is(run.attempts, 1);
  t.truthy(run.finished_at);
  t.regex(run.error!, /^Error: cannot reach postgres:\/\/\[redacted\]@db.internal/);
  t.false(run.error!.includes('hunter2'));
});

test.serial('an attempt past its timeout is stopped and fails as timeout', async (t) => {
  const id = await queueRun('outlasts_timeout');
  await db.pool.query('update job_runs set max_attempts = 1 where id = $1', [id]);
  const run = await untilState(id, 'failed');
  t.regex(run.error!, /^timeout:/);
});

test.serial('a run whose instance stopped renewing its lease is taken over and completed', async (t) => {
  const { rows } = await db.pool.query<{ id: string }>(
    `insert into job_runs (job, trigger, queue, state, attempts, max_attempts, instance_id, started_at, lease_expires_at)
     values ('quick', 'manual', 'default', 'running', 1, 3, 'dead-instance', now() - interval '1 minute', now() - interval '1 second')
     returning id::text`,
  );
  const run = await untilState(rows[0]!.id, 'succeeded');
  t.is(run.attempts, 2);
  t.is(run.instance_id, 'instance-a');
});

test.serial('a running attempt renews its lease, so a second instance never takes it over', async (t) => {
  const other = await startWorkers('instance-b', { leaseSeconds: 2 });
  const local = await startWorkers('instance-c', { leaseSeconds: 2 });
  await worker.stop(1_000);
  try {
    const id = await queueRun('holds');
    const run = await untilState(id, 'succeeded');
    t.is(run.attempts, 1);
  } finally {
    await other.stop(1_000);
    await local.stop(1_000);
    worker = await startWorkers('instance-a');
  }
});

test.serial('workers claim only the queues they consume', async (t) => {
  const id = await queueRun('elsewhere', 'reports');
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  t.is((await readRun(id)).state, 'queued');
  const reports = await startWorkers('instance-r', { queues: ['reports'] });
  try {
    t.is((await untilState(id, 'succeeded')).instance_id, 'instance-r');
  } finally {
    await reports.stop(1_000);
  }
});

test.serial('runs of a job this instance has no code for stay queued for an instance that has', async (t) => {
  const id = await queueRun('from_a_newer_version');
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  t.is((await readRun(id)).state, 'queued');
  await db.pool.query('delete from job_runs where id = $1', [id]);
});

test.serial('an instance announces the queues it consumes while it runs, and withdraws at stop', async (t) => {
  const { rows } = await db.pool.query<{ queues: string[]; workers: number }>(`select queues, workers from job_consumers where instance_id = 'instance-a'`);
  t.deepEqual(rows, [{ queues: ['default'], workers: 2 }]);
  const extra = await startWorkers('instance-x');
  await waitFor(async () => ((await db.pool.query(`select 1 from job_consumers where instance_id = 'instance-x'`)).rowCount ? true : undefined), 5_000, 'x');
  await extra.stop(1_000);
  t.is((await db.pool.query(`select 1 from job_consumers where instance_id = 'instance-x'`)).rowCount, 0);
});

test.serial('at shutdown a run that does not finish within the drain timeout is released for another instance', async (t) => {
  const id = await queueRun('holds');
  await untilState(id, 'running');
  await worker.stop(300);
  const released = await readRun(id);
  t.is(released.state, 'queued');
  t.is(released.attempts, 0);
  t.is(released.instance_id, null);
  t.is(released.lease_expires_at, null);
  t.regex(await worker.registry.metrics(), /backplane_job_attempts_total\{job_name="holds",outcome="released"\} 1/);
  worker = await startWorkers('instance-d');
  const run = await untilState(id, 'succeeded');
  t.is(run.instance_id, 'instance-d');
  t.is(run.attempts, 1);
});

test.serial('at shutdown a run that finishes within the drain timeout completes here', async (t) => {
  const id = await queueRun('holds');
  await untilState(id, 'running');
  await worker.stop(10_000);
  const run = await readRun(id);
  t.is(run.state, 'succeeded');
  worker = await startWorkers('instance-e');
});
