import test from 'ava';
import { z } from 'zod';
import { addJob, addJobs, MAX_PAYLOAD_BYTES } from '../../../../src/modules/jobs/queue/addJobs.ts';
import { QUEUE_JOBS_CHANNEL } from '../../../../src/modules/jobs/queue/channels.ts';
import { claimJobs } from '../../../../src/modules/jobs/queue/claimJobs.ts';
import { completeJobs } from '../../../../src/modules/jobs/queue/completeJobs.ts';
import { QueueError } from '../../../../src/modules/jobs/queue/errors.ts';
import { createQueueTaskRegistry, defineQueueTask } from '../../../../src/modules/jobs/queue/queueTask.ts';
import { withTransaction } from '../../../../src/platform/db/transaction.ts';
import { waitFor } from '../../../support/cluster.ts';
import { type TestDatabase, createTestDatabase } from '../../../support/database.ts';
import { countJobs, listenTo, readJob } from './support.ts';

const tasks = createQueueTaskRegistry([
  defineQueueTask({ name: 'receipts_send', payload: z.object({ orderId: z.string(), email: z.email() }), handler: async () => undefined }),
  defineQueueTask({
    name: 'reports_build',
    queue: 'reports',
    priority: 5,
    maxAttempts: 3,
    payload: z.object({ month: z.string() }),
    handler: async () => undefined,
  }),
]);
let db: TestDatabase;

test.before(async () => {
  db = await createTestDatabase();
});

test.after.always(async () => {
  await db?.drop();
});

test.serial('a job added in a committed transaction is there with its task defaults, and its queue is woken once at commit', async (t) => {
  const listener = await listenTo(db.url, QUEUE_JOBS_CHANNEL);
  try {
    const ids = await withTransaction(db.pool, async (tx) => {
      const first = await addJob(tx, tasks, 'reports_build', { month: '2026-10' });
      const second = await addJob(tx, tasks, 'reports_build', { month: '2026-11' });
      return [first.id!, second.id!];
    });
    const job = await readJob(db.pool, ids[0]!);
    t.like(job, { task: 'reports_build', queue: 'reports', state: 'available', priority: 5, attempts: 0, max_attempts: 3, payload: { month: '2026-10' } });
    // Both jobs' notifications in one transaction arrive as one: PostgreSQL folds equal ones.
    await waitFor(async () => (listener.payloads.length > 0 ? true : undefined), 10_000, 'the notification');
    t.deepEqual(listener.payloads, ['reports']);
  } finally {
    await listener.close();
  }
});

test.serial('a job added in a rolled-back transaction never existed and woke no one', async (t) => {
  const before = await countJobs(db.pool);
  const listener = await listenTo(db.url, QUEUE_JOBS_CHANNEL);
  try {
    await t.throwsAsync(
      withTransaction(db.pool, async (tx) => {
        await addJob(tx, tasks, 'receipts_send', { orderId: 'o-1', email: 'buyer@example.com' });
        throw new Error('the request failed after adding the job');
      }),
      { message: 'the request failed after adding the job' },
    );
    t.is(await countJobs(db.pool), before);
    // Notifications arrive in commit order: had the rolled-back add woken anyone, it would come first.
    await addJob(db.pool, tasks, 'reports_build', { month: '2026-12' });
    await waitFor(async () => (listener.payloads.length > 0 ? true : undefined), 10_000, 'the notification');
    t.deepEqual(listener.payloads, ['reports']);
  } finally {
    await listener.close();
  }
});

test.serial('addJobs adds a batch in one statement, ids in the order given', async (t) => {
  const added = await addJobs(db.pool, tasks, [
    { task: 'receipts_send', payload: { orderId: 'b-1', email: 'a@example.com' } },
    { task: 'reports_build', payload: { month: '2025-01' }, priority: -3 },
    { task: 'receipts_send', payload: { orderId: 'b-2', email: 'b@example.com' }, maxAttempts: 1 },
  ]);
  t.is(added.length, 3);
  t.like(await readJob(db.pool, added[0]!.id!), { payload: { orderId: 'b-1' } });
  t.like(await readJob(db.pool, added[1]!.id!), { priority: -3, queue: 'reports' });
  t.like(await readJob(db.pool, added[2]!.id!), { max_attempts: 1, payload: { orderId: 'b-2' } });
});

test.serial('a job due later is scheduled and not claimed before its time', async (t) => {
  const { id } = await addJob(db.pool, tasks, 'receipts_send', { orderId: 'later', email: 'c@example.com' }, { runAt: new Date(Date.now() + 3_600_000) });
  const job = await readJob(db.pool, id!);
  t.is(job.state, 'scheduled');
  t.true(job.due_in > 3_000);
  const claimed = await claimJobs(db.pool, { instanceId: 'i', slots: new Map([['default', 1000]]), tasks: tasks.names(), leaseSeconds: 30 });
  t.false(claimed.some((row) => row.id === id));
});

test.serial('a second add with the key of an unfinished job is ignored, in a batch too; once the first finished the key is free', async (t) => {
  const [first, again, other] = await addJobs(db.pool, tasks, [
    { task: 'reports_build', payload: { month: 'k-1' }, key: 'report:2026-01' },
    { task: 'reports_build', payload: { month: 'k-2' }, key: 'report:2026-01' },
    { task: 'reports_build', payload: { month: 'k-3' }, key: 'report:2026-02' },
  ]);
  t.truthy(first!.id);
  t.is(again!.id, null);
  t.truthy(other!.id);
  t.is((await addJob(db.pool, tasks, 'reports_build', { month: 'k-4' }, { key: 'report:2026-01' })).id, null);
  t.like(await readJob(db.pool, first!.id!), { payload: { month: 'k-1' } });

  await db.pool.query(`update queue_jobs set state = 'completed', finalized_at = now() where id = $1`, [first!.id]);
  const next = await addJob(db.pool, tasks, 'reports_build', { month: 'k-5' }, { key: 'report:2026-01' });
  t.truthy(next.id);
  t.not(next.id, first!.id);
});

test.serial('a key held by a job still running is not added again', async (t) => {
  const id = (await addJob(db.pool, tasks, 'receipts_send', { orderId: 'r-1', email: 'r@example.com' }, { key: 'receipt:r-1' })).id!;
  await db.pool.query(`update queue_jobs set priority = -1000 where id = $1`, [id]);
  const [claimed] = await claimJobs(db.pool, { instanceId: 'i', slots: new Map([['default', 1]]), tasks: tasks.names(), leaseSeconds: 30 });
  t.is(claimed!.id, id);
  t.is((await addJob(db.pool, tasks, 'receipts_send', { orderId: 'r-1', email: 'r@example.com' }, { key: 'receipt:r-1' })).id, null);
  await completeJobs(db.pool, 'i', [{ id, attempt: 1 }]);
});

test.serial('an add with a key another open transaction just added waits for it: ignored if it commits, added if it rolls back', async (t) => {
  for (const outcome of ['commit', 'rollback'] as const) {
    const key = `concurrent:${outcome}`;
    const holder = await db.pool.connect();
    try {
      await holder.query('begin');
      await addJob(holder, tasks, 'reports_build', { month: 'held' }, { key });
      const second = addJob(db.pool, tasks, 'reports_build', { month: 'second' }, { key });
      await holder.query(outcome);
      const added = await second;
      t.is(added.id === null, outcome === 'commit', outcome);
    } finally {
      holder.release();
    }
  }
});

test.serial('a malformed payload is refused with a stable code, naming the field and not the value, and nothing of the batch is added', async (t) => {
  const before = await countJobs(db.pool);
  const error = await t.throwsAsync(
    addJobs(db.pool, tasks, [
      { task: 'receipts_send', payload: { orderId: 'ok', email: 'ok@example.com' } },
      // @ts-expect-error the payload's type is checked from the task's name: orderId is a string
      { task: 'receipts_send', payload: { orderId: 42, email: 'not-an-address' } },
    ]),
    { instanceOf: QueueError },
  );
  t.is(error.code, 'invalid_job_payload');
  t.deepEqual(
    error.issues?.map((issue) => issue.location),
    ['jobs[1].payload.orderId', 'jobs[1].payload.email'],
  );
  t.false(JSON.stringify(error.issues).includes('not-an-address'));
  t.is(await countJobs(db.pool), before);
});

test.serial('an unknown task, an oversized payload and bad options are refused with their codes', async (t) => {
  const before = await countJobs(db.pool);
  // @ts-expect-error no task has this name
  const unknown = await t.throwsAsync(addJob(db.pool, tasks, 'nobody_knows', {}), { instanceOf: QueueError });
  t.is(unknown.code, 'unknown_job_task');
  const big = await t.throwsAsync(addJob(db.pool, tasks, 'reports_build', { month: 'x'.repeat(MAX_PAYLOAD_BYTES) }), { instanceOf: QueueError });
  t.is(big.code, 'job_payload_too_large');
  const options = await t.throwsAsync(addJob(db.pool, tasks, 'reports_build', { month: 'x' }, { maxAttempts: 0 }), { instanceOf: QueueError });
  t.is(options.code, 'invalid_job_options');
  t.deepEqual(
    options.issues?.map((issue) => issue.location),
    ['jobs[0].maxAttempts'],
  );
  t.is(await countJobs(db.pool), before);
});
