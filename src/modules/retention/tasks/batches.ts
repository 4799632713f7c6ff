import pg from 'pg';
import { describeTaskFailure } from '../../../platform/tasks/failure.ts';
import type { TaskFailure } from '../../../platform/tasks/task.ts';

/** How a purge sizes its batches: it starts at `initial` and aims each statement at `targetMs`. */
export interface BatchBounds {
  initial: number;
  min: number;
  max: number;
  targetMs: number;
}

/** What a purge task is given: plain data only, it opens its own connection. */
export interface PurgeInput {
  connectionString: string;
  /** ISO instant on the database clock: rows older than this go. */
  cutoff: string;
  batch: BatchBounds;
}

export interface PurgeResult {
  deleted: number;
  statements: number;
  longestStatementMs: number;
  /** What that statement was: `delete batch of 5000`, `count audit_events_p202401`, `drop audit_events_p202401`. */
  longestStatement: string;
  partitionsDropped: number;
  /** Set when the purge stopped part-way; the figures count what was done before. */
  failure: TaskFailure | null;
}

/** Counts a purge's work and times its statements. */
export class PurgeMeter {
  deleted = 0;
  statements = 0;
  longestStatementMs = 0;
  longestStatement = '';
  partitionsDropped = 0;

  /** Runs one statement (or one statement and its commit, for what holds locks until then) and times it. */
  async time<T>(label: string, statement: () => Promise<T>): Promise<{ value: T; ms: number }> {
    const started = performance.now();
    const value = await statement();
    const ms = performance.now() - started;
    this.statements += 1;
    if (ms > this.longestStatementMs) {
      this.longestStatementMs = ms;
      this.longestStatement = label;
    }
    return { value, ms };
  }
}

/** Bounds for a statement whose rows nobody else should be holding; a runaway one fails rather than stalls. */
const SESSION_SETTINGS = `select set_config('statement_timeout', '5s', false), set_config('lock_timeout', '1s', false)`;

/** Opens a connection of the purge's own, with the bounds above. */
export async function openPurgeConnection(connectionString: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString, application_name: 'backplane-retention' });
  try {
    await client.connect();
    await client.query(SESSION_SETTINGS);
  } catch (error) {
    await client.end().catch(() => undefined);
    throw error;
  }
  return client;
}

/**
 * Opens the task's own connection, runs the purge and closes the connection. A failure part-way
 * is returned with what was done before it, so the rows already deleted are still reported.
 */
export async function runPurge(input: PurgeInput, purge: (client: pg.Client, cutoff: Date, meter: PurgeMeter) => Promise<void>): Promise<PurgeResult> {
  const meter = new PurgeMeter();
  let client: pg.Client | undefined;
  let failure: TaskFailure | null = null;
  try {
    client = await openPurgeConnection(input.connectionString);
    await purge(client, new Date(input.cutoff), meter);
  } catch (error) {
    failure = describeTaskFailure(error);
  } finally {
    await client?.end().catch(() => undefined);
  }
  return {
    deleted: meter.deleted,
    statements: meter.statements,
    longestStatementMs: Math.round(meter.longestStatementMs * 10) / 10,
    longestStatement: meter.longestStatement,
    partitionsDropped: meter.partitionsDropped,
    failure,
  };
}

/** The next batch size: scaled toward the target duration, at most doubling or halving per step. */
export function nextBatchSize(size: number, ms: number, bounds: BatchBounds): number {
  const scaled = (size * bounds.targetMs) / Math.max(ms, 1);
  const stepped = Math.min(size * 2, Math.max(size / 2, scaled));
  return Math.round(Math.min(bounds.max, Math.max(bounds.min, stepped)));
}

/**
 * Deletes in batches until one comes back short, resizing each batch by how long the last one
 * took, so no statement holds its locks for long whatever the table's speed.
 */
export async function deleteInBatches(meter: PurgeMeter, bounds: BatchBounds, deleteBatch: (size: number) => Promise<number>): Promise<void> {
  let size = bounds.initial;
  for (;;) {
    const { value: deleted, ms } = await meter.time(`delete batch of ${size}`, () => deleteBatch(size));
    meter.deleted += deleted;
    if (deleted < size) {
      return;
    }
    size = nextBatchSize(size, ms, bounds);
  }
}
