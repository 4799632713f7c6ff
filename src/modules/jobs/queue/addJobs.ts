import type { Queryable } from '../../../platform/db/pool.ts';
import type { FieldIssue } from '../../../platform/errors.ts';
import { QUEUE_JOBS_CHANNEL } from './channels.ts';
import { QueueError } from './errors.ts';
import type { PayloadOf, QueueTaskRegistry, QueueTaskShape } from './queueTask.ts';

/** Bound on a payload's JSON: rows stay small, and a payload is data for the job, not a file. */
export const MAX_PAYLOAD_BYTES = 65_536;

export interface AddJobOptions {
  /** Not before this instant; a job due later is `scheduled`. Default now. */
  runAt?: Date;
  /** While a job with this key is unfinished, adding another with the same key is ignored. */
  key?: string;
  /** Default the task's. */
  priority?: number;
  /** Default the task's. */
  maxAttempts?: number;
}

/** One job to add: the task's name, its payload as the task's schema takes it, and options. */
export type JobToAdd<T extends QueueTaskShape> = {
  [N in T['name']]: { task: N; payload: PayloadOf<T, N> } & AddJobOptions;
}[T['name']];

export interface AddedJob {
  /** The new job's id; null when an unfinished job held its key and nothing was added. */
  id: string | null;
}

interface CheckedJob {
  task: string;
  queue: string;
  payload: string;
  priority: number;
  runAt: Date | null;
  maxAttempts: number;
  key: string | null;
}

function checkJob(tasks: QueueTaskRegistry, job: JobToAdd<QueueTaskShape>, index: number): CheckedJob {
  const at = `jobs[${index}]`;
  const task = tasks.get(job.task);
  if (!task) {
    throw new QueueError('unknown_job_task', `No queue task is declared with the name ${job.task}.`);
  }
  const parsed = task.payload.safeParse(job.payload);
  if (!parsed.success) {
    // Messages only: an issue never quotes the value, which may hold personal data.
    const issues: FieldIssue[] = parsed.error.issues.map((issue) => ({
      location: [`${at}.payload`, ...issue.path.map(String)].join('.'),
      message: issue.message,
    }));
    throw new QueueError('invalid_job_payload', `The payload of a ${task.name} job does not match its schema.`, { issues });
  }
  const payload = JSON.stringify(parsed.data ?? null);
  if (Buffer.byteLength(payload) > MAX_PAYLOAD_BYTES) {
    throw new QueueError('job_payload_too_large', `The payload of a ${task.name} job is larger than ${MAX_PAYLOAD_BYTES} bytes of JSON.`);
  }
  const option = (ok: boolean, location: string, message: string) => {
    if (!ok) {
      throw new QueueError('invalid_job_options', `The options of a ${task.name} job are invalid.`, { issues: [{ location: `${at}.${location}`, message }] });
    }
  };
  const priority = job.priority ?? task.priority;
  const maxAttempts = job.maxAttempts ?? task.maxAttempts;
  option(Number.isInteger(priority) && priority >= -1_000 && priority <= 1_000, 'priority', 'a whole number from -1000 to 1000');
  option(Number.isInteger(maxAttempts) && maxAttempts >= 1 && maxAttempts <= 100, 'maxAttempts', 'a whole number from 1 to 100');
  option(job.key === undefined || (job.key.length >= 1 && job.key.length <= 200), 'key', 'from 1 to 200 characters');
  option(job.runAt === undefined || (job.runAt instanceof Date && !Number.isNaN(job.runAt.getTime())), 'runAt', 'a valid date');
  return { task: task.name, queue: task.queue, payload, priority, runAt: job.runAt ?? null, maxAttempts, key: job.key ?? null };
}

// One statement for one job or a thousand. Ids are drawn first so each input row knows its own
// (RETURNING cannot name the input's position); a row whose key an unfinished job holds is skipped
// by the partial unique index, after waiting for the holder's transaction if it is still open.
// NOTIFY is queued with the transaction and delivered at its commit, once per queue however many
// jobs: rolled back, neither the jobs nor the wake-up ever existed. A job due later wakes no one;
// the workers' polling finds it.
const addJobsSql = `
with input as (
  select nextval(pg_get_serial_sequence('queue_jobs', 'id')) as id, i.*
  from unnest($1::text[], $2::text[], $3::jsonb[], $4::int[], $5::timestamptz[], $6::int[], $7::text[])
    with ordinality as i(task, queue, payload, priority, run_at, max_attempts, key, position)
), inserted as (
  insert into queue_jobs (id, task, queue, payload, state, priority, run_at, max_attempts, key)
  overriding system value
  select id, task, queue, payload, case when run_at > now() then 'scheduled' else 'available' end,
         priority, coalesce(run_at, now()), max_attempts, key
  from input
  order by position
  on conflict (key) where key is not null and state in ('available', 'scheduled', 'retryable', 'running') do nothing
  returning id, queue, state
), woken as (
  select count(pg_notify('${QUEUE_JOBS_CHANNEL}', queue)) as queues
  from (select distinct queue from inserted where state = 'available') q
)
select case when inserted.id is null then null else input.id::text end as id
from input left join inserted using (id) cross join woken
order by input.position`;

/**
 * Adds jobs in the caller's transaction (or alone, on a pool): committed, they run; rolled back,
 * they never existed. Every payload is checked against its task's schema before anything is
 * written; one bad job refuses the whole batch. A job whose key an unfinished job holds is ignored
 * (its id is null): the first job keeps its payload and its time.
 */
export async function addJobs<T extends QueueTaskShape>(db: Queryable, tasks: QueueTaskRegistry<T>, jobs: readonly JobToAdd<T>[]): Promise<AddedJob[]> {
  const checked = jobs.map((job, index) => checkJob(tasks as QueueTaskRegistry, job as JobToAdd<QueueTaskShape>, index));
  if (checked.length === 0) {
    return [];
  }
  const column = <K extends keyof CheckedJob>(key: K) => checked.map((job) => job[key]);
  const result = await db.query<{ id: string | null }>(addJobsSql, [
    column('task'),
    column('queue'),
    column('payload'),
    column('priority'),
    column('runAt'),
    column('maxAttempts'),
    column('key'),
  ]);
  return result.rows.map((row) => ({ id: row.id }));
}

/** Adds one job: `addJobs` with a single row. */
export async function addJob<T extends QueueTaskShape, N extends T['name']>(
  db: Queryable,
  tasks: QueueTaskRegistry<T>,
  task: N,
  payload: PayloadOf<T, N>,
  options: AddJobOptions = {},
): Promise<AddedJob> {
  const [added] = await addJobs(db, tasks, [{ task, payload, ...options } as JobToAdd<T>]);
  return added!;
}
