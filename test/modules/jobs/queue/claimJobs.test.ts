import test from 'ava';
import { z } from 'zod';
import { addJob, addJobs } from '../../../../src/modules/jobs/queue/addJobs.ts';
import { cancelJob } from '../../../../src/modules/jobs/queue/cancelJob.ts';
import { type ClaimRequest, claimJobs } from '../../../../src/modules/jobs/queue/claimJobs.ts';
import { countQueueJobs } from '../../../../src/modules/jobs/queue/countQueueJobs.ts';
import { completeJobs } from '../../../../src/modules/jobs/queue/completeJobs.ts';
import { discardAbandonedJobs } from '../../../../src/modules/jobs/queue/discardAbandonedJobs.ts';
import { failJob } from '../../../../src/modules/jobs/queue/failJob.ts';
import { pauseQueue, resumeQueue } from '../../../../src/modules/jobs/queue/pauseQueue.ts';
import { createQueueTaskRegistry, defineQueueTask } from '../../../../src/modules/jobs/queue/queueTask.ts';
import { releaseJobs } from '../../../../src/modules/jobs/queue/releaseJobs.ts';
import { retryJob } from '../../../../src/modules/jobs/queue/retryJob.ts';
import { QueueError } from '../../../../src/modules/jobs/queue/errors.ts';
import { renewLeases } from '../../../../src/modules/jobs/queue/renewLeases.ts';
import { type TestDatabase, createTestDatabase } from '../../../support/database.ts';
import { readJob } from './support.ts';

const noop = async () => undefined;
const tasks = createQueueTaskRegistry([
  defineQueueTask({ name: 'mail', queue: 'mail', payload: z.object({ n: z.number() }), handler: noop }),
  defineQueueTask({ name: 'thumbs', queue: 'thumbs', payload: z.object({ n: z.number() }), handler: noop }),
]);
let db: TestDatabase;

const claim = (instanceId: string, slots: Record<string, number>, extra: Partial<ClaimRequest> = {}) =>
  claimJobs(db.pool, { instanceId, slots: new Map(Object.entries(slots)), tasks: tasks.names(), leaseSeconds: 30, ...extra });

test.before(async () => {
  db = await createTestDatabase();
});

test.after.always(async () => {
  await db?.drop();
});

// Each test leaves no job claimable behind it, so the next one starts from an empty backlog.
test.afterEach.always(async () => {
  await db.pool.query(
    `update queue_jobs set state = 'cancelled', finalized_at = now(), locked_by = null, locked_until = null where state in ('available', 'scheduled', 'retryable', 'running')`,
  );
});

test.serial('a claim takes up to each queue’s free slots, by priority, then due time, then id, and counts the attempt', async (t) => {
  const added = await addJobs(db.pool, tasks, [
    { task: 'mail', payload: { n: 1 } },
    { task: 'mail', payload: { n: 2 }, priority: -5 },
    { task: 'mail', payload: { n: 3 } },
    { task: 'thumbs', payload: { n: 4 } },
    { task: 'thumbs', payload: { n: 5 } },
  ]);
  const claimed = await claim('instance-a', { mail: 2, thumbs: 1 });
  // The job of priority -5 first, then the older of the two others: the claim returns them in that order.
  t.deepEqual(
    claimed.filter((job) => job.queue === 'mail').map((job) => job.payload),
    [{ n: 2 }, { n: 1 }],
  );
  t.deepEqual(
    claimed.filter((job) => job.queue === 'thumbs').map((job) => job.id),
    [added[3]!.id],
  );
  t.true(claimed.every((job) => job.attempts === 1));
  t.like(await readJob(db.pool, added[1]!.id!), { state: 'running', locked_by: 'instance-a', attempts: 1 });
  t.like(await readJob(db.pool, added[2]!.id!), { state: 'available', locked_by: null });
});

test.serial('a paused queue hands out nothing until it is resumed; other queues go on', async (t) => {
  await addJobs(db.pool, tasks, [
    { task: 'mail', payload: { n: 1 } },
    { task: 'thumbs', payload: { n: 2 } },
  ]);
  const paused = await pauseQueue(db.pool, 'mail', 'the mail provider is down');
  t.like(paused, { name: 'mail', paused: true, pause_reason: 'the mail provider is down' });
  t.deepEqual(
    (await claim('instance-a', { mail: 10, thumbs: 10 })).map((job) => job.queue),
    ['thumbs'],
  );
  t.deepEqual(await claim('instance-a', { mail: 10 }), []);
  t.like(await resumeQueue(db.pool, 'mail'), { paused: false, paused_at: null, pause_reason: null });
  t.deepEqual(
    (await claim('instance-a', { mail: 10 })).map((job) => job.queue),
    ['mail'],
  );
});

test.serial('concurrent claims of two instances take disjoint jobs', async (t) => {
  await addJobs(
    db.pool,
    tasks,
    Array.from({ length: 40 }, (_, n) => ({ task: 'mail' as const, payload: { n } })),
  );
  const [a, b] = await Promise.all([claim('instance-a', { mail: 25 }), claim('instance-b', { mail: 25 })]);
  const ids = [...a!, ...b!].map((job) => job.id);
  t.is(ids.length, 40);
  t.is(new Set(ids).size, 40);
});

test.serial('a job whose lease passed is taken over with its next attempt; the old holder can no longer finish, renew or release it', async (t) => {
  const id = (await addJob(db.pool, tasks, 'mail', { n: 1 })).id!;
  await claim('instance-dead', { mail: 1 });
  t.deepEqual(await claim('instance-b', { mail: 1 }), [], 'not while the lease runs');
  await db.pool.query(`update queue_jobs set locked_until = now() - interval '1 second' where id = $1`, [id]);
  const [taken] = await claim('instance-b', { mail: 1 });
  t.is(taken!.id, id);
  t.is(taken!.attempts, 2);
  const job = await readJob(db.pool, id);
  t.like(job, { locked_by: 'instance-b', attempts: 2 });
  t.is(job.errors!.length, 1);
  t.like(job.errors![0], { attempt: 1 });
  t.regex(job.errors![0]!.message, /^lease_expired:/);

  const old = { id, attempt: 1 };
  t.is((await completeJobs(db.pool, 'instance-dead', [old])).size, 0);
  t.deepEqual([...(await renewLeases(db.pool, 'instance-dead', [old], 30))], [[id, 'lost']]);
  t.is(await releaseJobs(db.pool, 'instance-dead', [old]), 0);
  t.deepEqual([...(await completeJobs(db.pool, 'instance-b', [{ id, attempt: 2 }]))], [id]);
  t.is((await readJob(db.pool, id)).state, 'completed');
});

test.serial('a job whose lease passed on its last attempt is discarded, not taken over', async (t) => {
  const id = (await addJob(db.pool, tasks, 'mail', { n: 1 }, { maxAttempts: 1 })).id!;
  await claim('instance-dead', { mail: 1 });
  await db.pool.query(`update queue_jobs set locked_until = now() - interval '1 second' where id = $1`, [id]);
  t.deepEqual(await claim('instance-b', { mail: 1 }), []);
  t.true((await discardAbandonedJobs(db.pool)) >= 1);
  const job = await readJob(db.pool, id);
  t.like(job, { state: 'discarded', attempts: 1, locked_by: null });
  t.regex(job.errors![0]!.message, /^lease_expired:/);
});

test.serial('a released job is available again without the attempt counted', async (t) => {
  const id = (await addJob(db.pool, tasks, 'thumbs', { n: 1 })).id!;
  const [held] = await claim('instance-a', { thumbs: 1 });
  t.is(await releaseJobs(db.pool, 'instance-a', [{ id: held!.id, attempt: held!.attempts }]), 1);
  t.like(await readJob(db.pool, id), { state: 'available', attempts: 0, locked_by: null });
  t.is((await claim('instance-b', { thumbs: 1 }))[0]!.attempts, 1);
});

test.serial('a failed attempt retries after the wait given while attempts remain, then is discarded with every error kept', async (t) => {
  const id = (await addJob(db.pool, tasks, 'mail', { n: 1 }, { maxAttempts: 2 })).id!;
  const [first] = await claim('instance-a', { mail: 1 });
  const retry = await failJob(
    db.pool,
    'instance-a',
    { id, attempt: first!.attempts },
    { message: 'smtp_unavailable: try later', retryInSeconds: 600, giveUp: false },
  );
  t.is(retry!.state, 'retryable');
  const waiting = await readJob(db.pool, id);
  t.true(waiting.due_in > 500 && waiting.due_in <= 600);
  t.deepEqual(await claim('instance-a', { mail: 1 }), [], 'not before its time');

  await db.pool.query(`update queue_jobs set run_at = now() where id = $1`, [id]);
  const [second] = await claim('instance-a', { mail: 1 });
  t.is(second!.attempts, 2);
  const last = await failJob(db.pool, 'instance-a', { id, attempt: 2 }, { message: 'smtp_unavailable: again', retryInSeconds: 600, giveUp: false });
  t.is(last!.state, 'discarded');
  const job = await readJob(db.pool, id);
  t.like(job, { state: 'discarded', attempts: 2 });
  t.truthy(job.finalized_at);
  t.deepEqual(
    job.errors!.map((error) => [error.attempt, error.message]),
    [
      [1, 'smtp_unavailable: try later'],
      [2, 'smtp_unavailable: again'],
    ],
  );
});

test.serial('a job keeps its last five errors only', async (t) => {
  const id = (await addJob(db.pool, tasks, 'mail', { n: 1 }, { maxAttempts: 8 })).id!;
  for (let attempt = 1; attempt <= 7; attempt += 1) {
    await db.pool.query(`update queue_jobs set run_at = now() where id = $1`, [id]);
    await claim('instance-a', { mail: 1 });
    await failJob(db.pool, 'instance-a', { id, attempt }, { message: `failure ${attempt}`, retryInSeconds: 1, giveUp: false });
  }
  t.deepEqual(
    (await readJob(db.pool, id)).errors!.map((error) => error.attempt),
    [3, 4, 5, 6, 7],
  );
});

test.serial('cancel ends an unfinished job and says the state it was in; a finished job is left alone', async (t) => {
  const [waiting, running] = await addJobs(db.pool, tasks, [
    { task: 'thumbs', payload: { n: 1 } },
    { task: 'mail', payload: { n: 2 } },
  ]);
  await claim('instance-a', { mail: 1 });
  t.is(await cancelJob(db.pool, waiting!.id!), 'available');
  t.is(await cancelJob(db.pool, running!.id!), 'running');
  t.like(await readJob(db.pool, running!.id!), { state: 'cancelled', locked_by: null });
  t.is(await cancelJob(db.pool, running!.id!), undefined);
  t.is((await completeJobs(db.pool, 'instance-a', [{ id: running!.id!, attempt: 1 }])).size, 0, 'its holder cannot complete it');
  t.deepEqual(
    [...(await renewLeases(db.pool, 'instance-a', [{ id: running!.id!, attempt: 1 }], 30))],
    [[running!.id, 'cancelled']],
    'its holder learns it at the renewal',
  );
  t.deepEqual(await claim('instance-a', { mail: 10, thumbs: 10 }), []);
});

test.serial('jobs of a task this instance has no code for stay for an instance that has', async (t) => {
  const id = (await addJob(db.pool, tasks, 'mail', { n: 1 })).id!;
  t.deepEqual(await claim('instance-old', { mail: 10 }, { tasks: ['thumbs'] }), []);
  t.is((await claim('instance-new', { mail: 10 }))[0]!.id, id);
});

test.serial('an operator retries a discarded or cancelled job now, with one more attempt; an unfinished one is refused', async (t) => {
  const id = (await addJob(db.pool, tasks, 'mail', { n: 1 }, { maxAttempts: 1, key: 'mail:retry' })).id!;
  const [first] = await claim('instance-a', { mail: 1 });
  await failJob(db.pool, 'instance-a', { id, attempt: first!.attempts }, { message: 'smtp_unavailable: down', retryInSeconds: 1, giveUp: false });
  t.is((await readJob(db.pool, id)).state, 'discarded');
  t.true(await retryJob(db.pool, id));
  t.like(await readJob(db.pool, id), { state: 'available', attempts: 1, max_attempts: 2, finalized_at: null });
  const refused = await t.throwsAsync(retryJob(db.pool, id), { instanceOf: QueueError });
  t.is(refused.code, 'job_not_retryable');
  t.is((await claim('instance-a', { mail: 1 }))[0]!.attempts, 2);
  t.false(await retryJob(db.pool, '999999999'));

  await cancelJob(db.pool, id);
  const holder = (await addJob(db.pool, tasks, 'mail', { n: 2 }, { key: 'mail:retry' })).id!;
  const held = await t.throwsAsync(retryJob(db.pool, id), { instanceOf: QueueError });
  t.is(held.code, 'job_not_retryable', 'another job holds its key');
  await cancelJob(db.pool, holder);
  t.true(await retryJob(db.pool, id));
});

test.serial('the queues’ counts by state come from one grouped read; a due scheduled job counts as available', async (t) => {
  await db.pool.query(`delete from queue_jobs`);
  const [, , retried, , discarded] = await addJobs(db.pool, tasks, [
    { task: 'mail', payload: { n: 1 } },
    { task: 'mail', payload: { n: 2 }, runAt: new Date(Date.now() + 3_600_000) },
    { task: 'mail', payload: { n: 3 }, priority: -10 },
    { task: 'thumbs', payload: { n: 4 } },
    { task: 'thumbs', payload: { n: 5 }, maxAttempts: 1, priority: -10 },
  ]);
  const claimed = (await claim('instance-a', { mail: 1, thumbs: 2 })).map((job) => job.payload);
  t.deepEqual(claimed, [{ n: 3 }, { n: 5 }, { n: 4 }]);
  await failJob(db.pool, 'instance-a', { id: retried!.id!, attempt: 1 }, { message: 'later', retryInSeconds: 600, giveUp: false });
  await failJob(db.pool, 'instance-a', { id: discarded!.id!, attempt: 1 }, { message: 'bad', retryInSeconds: 1, giveUp: false });
  const counts = await countQueueJobs(db.pool);
  t.like(counts, [
    { queue: 'mail', available: 1, scheduled: 1, retryable: 1, running: 0, discarded_last_day: 0 },
    { queue: 'thumbs', available: 0, scheduled: 0, retryable: 0, running: 1, discarded_last_day: 1, oldest_due_at: null },
  ]);
  t.truthy(counts[0]!.oldest_due_at);
});
