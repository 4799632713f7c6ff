import type { TaskRef } from '../tasks/task.ts';
import type { PurgeInput, PurgeResult } from './batchedDelete.ts';
import type { Queryable } from './pool.ts';

/** Where a table's rows stand against a retention, on the database clock. */
export interface TargetAge {
  /** Now minus the retention: older rows are past it. */
  cutoff: Date;
  /** The oldest row the purge judges; null when there is none. */
  oldest: Date | null;
  /** Rows older than the cutoff. */
  pastCutoff: number;
  /** True when part of `pastCutoff` comes from the catalogue's row estimates rather than a count. */
  pastCutoffEstimated: boolean;
}

/**
 * How one kind of rows ages and is purged, declared by the module that owns the table: its SQL
 * stays there. The purge runs on a worker thread, which cannot be handed a function: hence a task.
 */
export interface AgingTarget<Setting extends string = string> {
  /** Public name of the kind of data. */
  kind: string;
  /** The duration setting holding its retention. */
  setting: Setting;
  /** How old the oldest row is and how many are past the cutoff; every statement under the caller's timeout. */
  age(db: Queryable, seconds: number): Promise<TargetAge>;
  /** Deletes the rows past the cutoff in bounded batches (`purgeInBatches` over the owner's batch). */
  task: TaskRef<PurgeInput, PurgeResult>;
}

interface AgeRow {
  cutoff: Date;
  oldest: Date | null;
  past_cutoff: string;
}

/** Runs an owner's age statement: `$1` the retention in seconds; columns cutoff, oldest, past_cutoff (an exact count). */
export async function countedAge(db: Queryable, sql: string, seconds: number): Promise<TargetAge> {
  const row = (await db.query<AgeRow>(sql, [seconds])).rows[0]!;
  return { cutoff: row.cutoff, oldest: row.oldest, pastCutoff: Number(row.past_cutoff), pastCutoffEstimated: false };
}
