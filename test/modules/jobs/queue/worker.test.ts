import test from 'ava';
import { once } from 'node:events';
import { z } from 'zod';
import { addJob, addJobs } from '../../../../src/modules/jobs/queue/addJobs.ts';
import { cancelJob } from '../../../../src/modules/jobs/queue/cancelJob.ts';
import { GiveUpJob, JobCancelledError, RetryJobLater } from '../../../../src/modules/jobs/queue/errors.ts';
import { createQueueTaskRegistry, defineQueueTask } from '../../../../src/modules/jobs/queue/queueTask.ts';
import type { AttemptOutcome } from '../../../../src/modules/jobs/queue/runJob.ts';
import { type QueueWorker, startQueueWorker } from '../../../../src/modules/jobs/queue/worker.ts';
import { createNotificationListener } from '../../../../src/platform/db/listener.ts';
import { createLogger } from '../../../../src/platform/logging/logger.ts';
import { createTaskPool } from '../../../../src/platform/tasks/pool.ts';
import { defineTask } from '../../../../src/platform/tasks/task.ts';
import client from 'prom-client';
import { waitFor } from '../../../support/cluster.ts';
import { type TestDatabase, createTestDatabase } from '../../../support/database.ts';
import type * as fixtures from '../../../platform/tasks/fixtures/tasks.ts';
import { readJob } from './support.ts';

const logger = createLogger('silent');
const double = defineTask<typeof fixtures.double>('test.double', import.meta.url, '../../../platform/tasks/fixtures/tasks', 'double');
let db: TestDatabase;

interface Deferred {
  promise: Promise<void>;
  resolve(): void;
}
const deferred = (): Deferred => {
  let resolve = () => undefined as void;
  const promise = new Promise<void>((settle) => {
    resolve = settle;
  });
  return { promise, resolve };
};

/** A handler's progress, by the tag in its payload: the test lets it finish when it chooses. */
interface Gate {
  started: Deferred;
  finish: Deferred;
  signal?: AbortSignal;
}
const gates = new Map<string, Gate>();
const gate = (tag: string): Gate => {
  let entry = gates.get(tag);
  if (!entry) {
    entry = { started: deferred(), finish: deferred() };
    gates.set(tag, entry);
  }
  return entry;
};
/** Settles when the test opens the gate, or rejects with the signal's reason when the attempt is aborted. */
const heldUntilOpened = async (tag: string, signal: AbortSignal) => {
  const entry = gate(tag);
  entry.signal = signal;
  entry.started.resolve();
  const aborted = once(signal, 'abort').then(() => Promise.reject(signal.reason as Error));
  await Promise.race([entry.finish.promise, aborted]);
};

let active = 0;
let mostActive = 0;
let snoozed = 0;
const Tagged = z.object({ tag: z.string() });

const tasks = createQueueTaskRegistry([
  defineQueueTask({
    name: 'counted',
    payload: z.object({ n: z.number().int() }),
    handler: async ({ db: tx, job, payload }) => {
      await tx.query('insert into handled (job_id, attempt, value) values ($1, $2, $3)', [job.id, job.attempt, payload.n]);
    },
  }),
  defineQueueTask({
    name: 'doubled',
    payload: z.object({ n: z.number().int() }),
    handler: async ({ db: tx, job, payload, runTask }) => {
      const { doubled } = await runTask(double, { n: payload.n });
      await tx.query('insert into handled (job_id, attempt, value) values ($1, $2, $3)', [job.id, job.attempt, doubled]);
    },
  }),
  defineQueueTask({
    name: 'always_fails',
    maxAttempts: 3,
    backoff: { initialSeconds: 0.01, maxSeconds: 0.02 },
    payload: z.object({}),
    handler: async ({ job }) => {
      throw Object.assign(new Error(`the service refused attempt ${job.attempt}`), { code: 'service_refused' });
    },
  }),
  defineQueueTask({
    name: 'snoozes',
    payload: z.object({}),
    handler: async () => {
      snoozed += 1;
      throw new RetryJobLater(3_600, 'the provider asked to wait');
    },
  }),
  defineQueueTask({
    name: 'hopeless',
    maxAttempts: 5,
    payload: z.object({}),
    handler: async () => {
      throw new GiveUpJob('the order no longer exists');
    },
  }),
  defineQueueTask({
    name: 'outlasts_timeout',
    timeoutSeconds: 1,
    maxAttempts: 1,
    payload: z.object({}),
    handler: ({ signal }) => once(signal, 'abort').then(() => undefined),
  }),
  defineQueueTask({ name: 'held', payload: Tagged, handler: ({ payload, signal }) => heldUntilOpened(payload.tag, signal) }),
  defineQueueTask({
    name: 'held_slow',
    queue: 'slow',
    payload: Tagged,
    handler: async ({ payload, signal }) => {
      active += 1;
      mostActive = Math.max(mostActive, active);
      try {
        await heldUntilOpened(payload.tag, signal);
      } finally {
        active -= 1;
      }
    },
  }),
  defineQueueTask({
    name: 'counted_in_transaction',
    transactional: true,
    payload: Tagged,
    handler: async ({ db: tx, job, payload, signal }) => {
      await tx.query('insert into handled (job_id, attempt, value) values ($1, $2, 1)', [job.id, job.attempt]);
      await heldUntilOpened(payload.tag, signal);
    },
  }),
]);

interface Running {
  worker: QueueWorker;
  outcomes: Map<string, AttemptOutcome[]>;
  drain(timeoutMs?: number): ReturnType<QueueWorker['drain']>;
}

async function startWorker(instanceId: string, concurrency: Record<string, number> = { default: 4, slow: 2 }, prefetch = 0): Promise<Running> {
  const listener = createNotificationListener(db.url, logger);
  const registry = new client.Registry();
  const pool = createTaskPool({ threads: 1, closeTimeoutMs: 5_000, registry, logger });
  const outcomes = new Map<string, AttemptOutcome[]>();
  const worker = startQueueWorker({
    pool: db.pool,
    listener,
    tasks,
    logger,
    runTask: pool.runTask,
    instanceId,
    concurrency,
    prefetch,
    leaseSeconds: 30,
    pollMs: 200,
    onAttempt: (job, outcome) => outcomes.set(job.id, [...(outcomes.get(job.id) ?? []), outcome]),
  });
  await listener.listening();
  return {
    worker,
    outcomes,
    async drain(timeoutMs = 1_000) {
      const result = await worker.drain(timeoutMs);
      await pool.close();
      await listener.close();
      return result;
    },
  };
}

const untilState = (id: string, state: string) =>
  waitFor(
    async () => {
      const job = await readJob(db.pool, id);
      return job.state === state ? job : undefined;
    },
    30_000,
    `job ${id} to be ${state}`,
  );
const handledRows = async (id: string) =>
  (await db.pool.query<{ attempt: number; value: number }>('select attempt, value from handled where job_id = $1', [id])).rows;

test.before(async () => {
  db = await createTestDatabase();
  await db.pool.query('create table handled (job_id bigint not null, attempt integer not null, value integer not null)');
});

test.after.always(async () => {
  await db?.drop();
});

test.serial('a worker runs a committed job with its typed payload and completes it; a handler reaches the task pool', async (t) => {
  const running = await startWorker('instance-a');
  try {
    const [plain, pooled] = await addJobs(db.pool, tasks, [
      { task: 'counted', payload: { n: 7 } },
      { task: 'doubled', payload: { n: 21 } },
    ]);
    const done = await untilState(plain!.id!, 'completed');
    t.like(done, { attempts: 1, locked_by: null });
    t.truthy(done.finalized_at);
    t.deepEqual(await handledRows(plain!.id!), [{ attempt: 1, value: 7 }]);
    await untilState(pooled!.id!, 'completed');
    t.deepEqual(await handledRows(pooled!.id!), [{ attempt: 1, value: 42 }]);
  } finally {
    await running.drain();
  }
});

test.serial('a failing job is retried after its backoff until maxAttempts, then discarded with each error', async (t) => {
  const running = await startWorker('instance-a');
  try {
    const { id } = await addJob(db.pool, tasks, 'always_fails', {});
    const job = await untilState(id!, 'discarded');
    t.is(job.attempts, 3);
    t.deepEqual(
      job.errors!.map((error) => [error.attempt, error.message]),
      [1, 2, 3].map((n) => [n, `service_refused: the service refused attempt ${n}`]),
    );
    t.deepEqual(running.outcomes.get(id!), ['retryable', 'retryable', 'discarded']);
  } finally {
    await running.drain();
  }
});

test.serial('a handler can ask to run again later without spending an attempt, or give up at once', async (t) => {
  const running = await startWorker('instance-a');
  try {
    const [later, hopeless] = await addJobs(db.pool, tasks, [
      { task: 'snoozes', payload: {} },
      { task: 'hopeless', payload: {} },
    ]);
    const waiting = await untilState(later!.id!, 'scheduled');
    t.like(waiting, { attempts: 0, errors: null });
    t.true(waiting.due_in > 3_000);
    t.is(snoozed, 1);
    const discarded = await untilState(hopeless!.id!, 'discarded');
    t.is(discarded.attempts, 1);
    t.deepEqual(
      discarded.errors!.map((error) => error.message),
      ['GiveUpJob: the order no longer exists'],
    );
  } finally {
    await running.drain();
    await cancelJob(db.pool, (await db.pool.query<{ id: string }>(`select id::text from queue_jobs where task = 'snoozes'`)).rows[0]!.id);
  }
});

test.serial('an attempt past its timeout is aborted and counts as a failure', async (t) => {
  const running = await startWorker('instance-a');
  try {
    const { id } = await addJob(db.pool, tasks, 'outlasts_timeout', {});
    const job = await untilState(id!, 'discarded');
    t.regex(job.errors![0]!.message, /^timeout: the attempt did not finish within 1 s/);
  } finally {
    await running.drain();
  }
});

test.serial('a job whose instance died is taken over when its lease has passed', async (t) => {
  const { id } = await addJob(db.pool, tasks, 'counted', { n: 5 });
  await db.pool.query(
    `update queue_jobs set state = 'running', attempts = 1, locked_by = 'dead-instance', locked_until = now() - interval '1 second' where id = $1`,
    [id],
  );
  const running = await startWorker('instance-a');
  try {
    const job = await untilState(id!, 'completed');
    t.is(job.attempts, 2);
    t.deepEqual(await handledRows(id!), [{ attempt: 2, value: 5 }]);
  } finally {
    await running.drain();
  }
});

test.serial('cancelling a running job aborts its handler’s signal', async (t) => {
  const running = await startWorker('instance-a');
  try {
    const { id } = await addJob(db.pool, tasks, 'held', { tag: 'cancel-me' });
    await gate('cancel-me').started.promise;
    t.is(await cancelJob(db.pool, id!), 'running');
    await waitFor(async () => (running.outcomes.get(id!) ? true : undefined), 30_000, 'the attempt to end');
    t.deepEqual(running.outcomes.get(id!), ['cancelled']);
    t.true(gate('cancel-me').signal!.reason instanceof JobCancelledError);
    t.like(await readJob(db.pool, id!), { state: 'cancelled', attempts: 1 });
  } finally {
    await running.drain();
  }
});

test.serial('a queue’s jobs never run more at once than its concurrency on the instance', async (t) => {
  const running = await startWorker('instance-a', { default: 4, slow: 2 });
  try {
    const added = await addJobs(
      db.pool,
      tasks,
      Array.from({ length: 5 }, (_, n) => ({ task: 'held_slow' as const, payload: { tag: `slow-${n}` } })),
    );
    await waitFor(async () => (running.worker.running().slow === 2 && active === 2 ? true : undefined), 30_000, 'two jobs to run');
    for (let n = 0; n < 5; n += 1) {
      gate(`slow-${n}`).finish.resolve();
    }
    for (const job of added) {
      await untilState(job.id!, 'completed');
    }
    t.is(mostActive, 2);
  } finally {
    await running.drain();
  }
});

test.serial('drain lets a job finish within its budget', async (t) => {
  const running = await startWorker('instance-a');
  const { id } = await addJob(db.pool, tasks, 'held', { tag: 'drain-finish' });
  await gate('drain-finish').started.promise;
  const drained = running.drain(60_000);
  gate('drain-finish').finish.resolve();
  t.deepEqual(await drained, { finished: 1, released: 0 });
  t.is((await readJob(db.pool, id!)).state, 'completed');
});

test.serial('drain releases the jobs still running at the end of its budget, without spending their attempt', async (t) => {
  const running = await startWorker('instance-a');
  const [plain, transactional] = await addJobs(db.pool, tasks, [
    { task: 'held', payload: { tag: 'drain-release' } },
    { task: 'counted_in_transaction', payload: { tag: 'drain-release-tx' } },
  ]);
  await gate('drain-release').started.promise;
  await gate('drain-release-tx').started.promise;
  t.deepEqual(await running.drain(50), { finished: 0, released: 2 });
  t.like(await readJob(db.pool, plain!.id!), { state: 'available', attempts: 0, locked_by: null });
  t.like(await readJob(db.pool, transactional!.id!), { state: 'available', attempts: 0 });
  t.deepEqual(await handledRows(transactional!.id!), [], 'the transactional handler’s write rolled back');
  await cancelJob(db.pool, plain!.id!);
  await cancelJob(db.pool, transactional!.id!);
});

test.serial('a transactional job’s writes commit with its completion, and roll back when it is cancelled or taken over', async (t) => {
  const running = await startWorker('instance-a');
  try {
    const [kept, cancelled, taken] = await addJobs(db.pool, tasks, [
      { task: 'counted_in_transaction', payload: { tag: 'tx-kept' } },
      { task: 'counted_in_transaction', payload: { tag: 'tx-cancelled' } },
      { task: 'counted_in_transaction', payload: { tag: 'tx-taken' } },
    ]);
    await Promise.all(['tx-kept', 'tx-cancelled', 'tx-taken'].map((tag) => gate(tag).started.promise));

    gate('tx-kept').finish.resolve();
    await untilState(kept!.id!, 'completed');
    t.deepEqual(await handledRows(kept!.id!), [{ attempt: 1, value: 1 }]);

    await cancelJob(db.pool, cancelled!.id!);
    await waitFor(async () => (running.outcomes.get(cancelled!.id!) ? true : undefined), 30_000, 'the cancelled attempt to end');
    t.deepEqual(await handledRows(cancelled!.id!), []);

    // Another instance took the job over (its lease had passed): this attempt may no longer commit.
    await db.pool.query(`update queue_jobs set locked_by = 'instance-b', attempts = attempts + 1 where id = $1`, [taken!.id]);
    gate('tx-taken').finish.resolve();
    await waitFor(async () => (running.outcomes.get(taken!.id!) ? true : undefined), 30_000, 'the taken attempt to end');
    t.deepEqual(running.outcomes.get(taken!.id!), ['lost']);
    t.deepEqual(await handledRows(taken!.id!), []);
    await cancelJob(db.pool, taken!.id!);
  } finally {
    await running.drain();
  }
});

test.serial('two workers on one database run each job once, one of them claiming ahead', async (t) => {
  const [a, b] = await Promise.all([startWorker('instance-a', { default: 3 }), startWorker('instance-b', { default: 3 }, 20)]);
  try {
    const added = await addJobs(
      db.pool,
      tasks,
      Array.from({ length: 300 }, (_, n) => ({ task: 'counted' as const, payload: { n } })),
    );
    const ids = added.map((job) => job.id!);
    await waitFor(
      async () =>
        (await db.pool.query<{ n: number }>(`select count(*)::int as n from queue_jobs where id = any($1::bigint[]) and state = 'completed'`, [ids])).rows[0]!
          .n === 300
          ? true
          : undefined,
      60_000,
      'every job to complete',
    );
    const { rows } = await db.pool.query<{ runs: number; jobs: number }>(
      `select count(*)::int as runs, count(distinct job_id)::int as jobs from handled where job_id = any($1::bigint[])`,
      [ids],
    );
    t.deepEqual(rows[0], { runs: 300, jobs: 300 });
  } finally {
    await Promise.all([a.drain(), b.drain()]);
  }
});

test.serial('jobs claimed ahead wait for a slot holding their lease, and the drain gives them back with the running one', async (t) => {
  const running = await startWorker('instance-a', { slow: 1 }, 3);
  const added = await addJobs(
    db.pool,
    tasks,
    Array.from({ length: 4 }, (_, n) => ({ task: 'held_slow' as const, payload: { tag: `ahead-${n}` } })),
  );
  await waitFor(
    async () => (running.worker.running().slow === 1 && running.worker.waiting().slow === 3 ? true : undefined),
    30_000,
    'one job running, three waiting',
  );
  const states = await db.pool.query<{ state: string }>('select state from queue_jobs where id = any($1::bigint[])', [added.map((job) => job.id)]);
  t.deepEqual(
    states.rows.map((row) => row.state),
    ['running', 'running', 'running', 'running'],
  );
  t.deepEqual(await running.drain(50), { finished: 0, released: 1 });
  for (const job of added) {
    t.like(await readJob(db.pool, job.id!), { state: 'available', attempts: 0, locked_by: null });
    await cancelJob(db.pool, job.id!);
  }
});
