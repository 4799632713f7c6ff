import type { Queryable } from '../../../platform/db/pool.ts';
import { type RunRow, RUN_COLUMNS } from './reads.ts';

export interface AttemptRow {
  attempt: number;
  instance_id: string;
  started_at: Date;
  finished_at: Date | null;
  outcome: 'succeeded' | 'failed' | 'lost' | null;
  error: string | null;
}

const selectRunSql = `select ${RUN_COLUMNS} from job_runs where id = $1`;

/** One run by id, or undefined. */
export async function selectRun(db: Queryable, id: string): Promise<RunRow | undefined> {
  return (await db.query<RunRow>(selectRunSql, [id])).rows[0];
}

// A run has at most max_attempts (100) attempts: the primary key reads them all in order.
const selectAttemptsSql = `
select attempt, instance_id, started_at, finished_at, outcome, error
from job_run_attempts where run_id = $1 order by attempt`;

/** The recorded attempts of a run, first to last (none for a run older than the table). */
export async function selectAttempts(db: Queryable, runId: string): Promise<AttemptRow[]> {
  return (await db.query<AttemptRow>(selectAttemptsSql, [runId])).rows;
}

const lockRunSql = `select ${RUN_COLUMNS} from job_runs where id = $1 for update`;

/** The run, held until the transaction ends, so two retries of it cannot both pass. */
export async function lockRun(tx: Queryable, id: string): Promise<RunRow | undefined> {
  return (await tx.query<RunRow>(lockRunSql, [id])).rows[0];
}
