// Shared by the queue's tests: a task list, a listener on the queue's channel, and row reads.
import pg from 'pg';
import type { Queryable } from '../../../../src/platform/db/pool.ts';

export interface JobRow {
  id: string;
  task: string;
  queue: string;
  payload: unknown;
  state: string;
  priority: number;
  attempts: number;
  max_attempts: number;
  key: string | null;
  locked_by: string | null;
  errors: Array<{ at: string; attempt: number; message: string }> | null;
  run_at: Date;
  finalized_at: Date | null;
  /** run_at - now() in seconds. */
  due_in: number;
}

export const readJob = async (db: Queryable, id: string): Promise<JobRow> =>
  (await db.query<JobRow>('select *, id::text, extract(epoch from run_at - now())::float8 as due_in from queue_jobs where id = $1', [id])).rows[0]!;

export const countJobs = async (db: Queryable): Promise<number> => (await db.query<{ n: number }>('select count(*)::int as n from queue_jobs')).rows[0]!.n;

/** A connection that LISTENs on a channel and keeps every payload it receives, in order. */
export async function listenTo(url: string, channel: string): Promise<{ payloads: string[]; close(): Promise<void> }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const payloads: string[] = [];
  client.on('notification', (message) => payloads.push(message.payload ?? ''));
  await client.query(`listen ${channel}`);
  return { payloads, close: () => client.end() };
}
