import pg from 'pg';
import { describeTaskFailure } from '../tasks/failure.ts';
import type { TaskFailure } from '../tasks/task.ts';
import { type PurgeLedgerKey, recordPurged } from './purgeLedger.ts';
import { transactionOn } from './transaction.ts';

/** How a purge sizes its batches: it starts at `initial` and aims each statement at `targetMs`. */
export interface BatchBounds {
  /** Rows in the first batch. */
  initial: number;
  /** Fewest rows in a batch. */
  min: number;
  /** Most rows in a batch. */
  max: number;
  /** How long each statement should take, in ms. */
  targetMs: number;
}

/** What a purge task is given: plain data only; it connects from the string itself. */
export interface PurgeInput {
  /** The database, for the purge's own connections. */
  connectionString: string;
  /** ISO instant on the database clock: rows older than this go. */
  cutoff: string;
  /** How big each batch is. */
  batch: BatchBounds;
  /** Each batch's count goes to the purge ledger under this key, in the batch's transaction. */
  ledger: PurgeLedgerKey;
  /** Connections the purge may hold at once (DATABASE_TASK_POOL_SIZE, at least 2); 3 unless given. */
  connections?: number;
}

export const DEFAULT_PURGE_CONNECTIONS = 3;

/** What a purge task reports back: the retention job records it in its audit event and metrics. */
export interface PurgeResult {
  /** Rows deleted. */
  deleted: number;
  /** Statements run. */
  statements: number;
  /** How long the longest one took, in ms. */
  longestStatementMs: number;
  /** What that statement was: `delete batch of 5000`, `count audit_events_p202401`, `drop audit_events_p202401`. */
  longestStatement: string;
  /** Monthly partitions dropped whole (audit events). */
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

// Bounds for a statement whose rows nobody else should be holding; a runaway one fails rather than stalls.
const SESSION_OPTIONS = '-c statement_timeout=5s -c lock_timeout=1s';
// Connections outlive a task by this much, so the kinds of one run share them.
const IDLE_CONNECTION_MS = 5_000;

const pools = new Map<string, pg.Pool>();

/**
 * The thread's connections to one database. A thread runs one task at a time and a run's kinds
 * follow one another, so they reuse these instead of each signing in anew (10-35 ms under load).
 */
function purgePool(connectionString: string, max: number): pg.Pool {
  const key = `${max} ${connectionString}`;
  let pool = pools.get(key);
  if (!pool) {
    pool = new pg.Pool({
      connectionString,
      application_name: 'backplane-retention',
      options: SESSION_OPTIONS,
      max,
      idleTimeoutMillis: IDLE_CONNECTION_MS,
      allowExitOnIdle: true,
    });
    // An idle connection the server closed is discarded; the next task opens another.
    pool.on('error', () => undefined);
    pools.set(key, pool);
  }
  return pool;
}

export interface PurgeConnection {
  client: pg.PoolClient;
  /** Hands the connection back for the next task, or closes it after a failure (it may be mid-transaction). */
  release(failed: boolean): void;
}

/** A connection of the purge's own, with the bounds above. */
export async function openPurgeConnection(input: PurgeInput): Promise<PurgeConnection> {
  const client = await purgePool(input.connectionString, input.connections ?? DEFAULT_PURGE_CONNECTIONS).connect();
  return { client, release: (failed) => client.release(failed) };
}

/**
 * Takes a connection, runs the purge and hands the connection back. A failure part-way is
 * returned with what was done before it, so the rows already deleted are still reported.
 */
export async function runPurge(input: PurgeInput, purge: (client: pg.ClientBase, cutoff: Date, meter: PurgeMeter) => Promise<void>): Promise<PurgeResult> {
  const meter = new PurgeMeter();
  let connection: PurgeConnection | undefined;
  let failure: TaskFailure | null = null;
  try {
    connection = await openPurgeConnection(input);
    await purge(connection.client, new Date(input.cutoff), meter);
  } catch (error) {
    failure = describeTaskFailure(error);
  } finally {
    connection?.release(failure !== null);
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

/** Deletes up to `size` rows older than the cutoff, oldest first; fewer than asked means none are left. */
export type DeleteBatch = (client: pg.ClientBase, cutoff: Date, size: number) => Promise<number>;

/**
 * A purge task of one table: the owner's batch, repeated on a connection of the purge's own, each
 * batch committed with its count in the purge ledger, so a purge killed part-way loses neither.
 */
export function purgeInBatches(input: PurgeInput, deleteBatch: DeleteBatch): Promise<PurgeResult> {
  return runPurge(input, (client, cutoff, meter) =>
    deleteInBatches(meter, input.batch, (size) =>
      transactionOn(client, async () => {
        const deleted = await deleteBatch(client, cutoff, size);
        await recordPurged(client, input.ledger, deleted);
        return deleted;
      }),
    ),
  );
}
