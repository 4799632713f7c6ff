import type { Queryable } from '../../platform/db/pool.ts';
import type { JobsServiceDeps } from './ports.ts';
import { selectDefinitionRows } from './store/definitions.ts';
import { type RunState, selectLastRuns } from './store/reads.ts';
import { definitionView } from './views.ts';

/** What another module shows about a job it relies on (retention shows its enforcing job). */
export interface JobStatus {
  name: string;
  enabled: boolean;
  schedule: string;
  /** Null while disabled. */
  nextRunAt: Date | null;
  lastRun: { id: string; state: RunState; startedAt: Date; finishedAt: Date | null; error: string | null } | null;
}

/**
 * The configuration in force, the next slot and the last run that started, of one job defined in
 * code: two narrow reads, on `db` when the caller bounds them in its own transaction.
 */
export async function describeJob(deps: Pick<JobsServiceDeps, 'pool' | 'jobs'>, name: string, db: Queryable = deps.pool): Promise<JobStatus> {
  const job = deps.jobs.get(name);
  if (!job) {
    throw new Error(`job ${name} is not defined`);
  }
  const [[row], [last]] = await Promise.all([selectDefinitionRows(db, [name]), selectLastRuns(db, [name])]);
  const view = definitionView(job, row!);
  return {
    name,
    enabled: view.enabled,
    schedule: view.schedule,
    nextRunAt: view.next_run_at ? new Date(view.next_run_at) : null,
    lastRun: last ? { id: last.id, state: last.state, startedAt: last.started_at, finishedAt: last.finished_at, error: last.error } : null,
  };
}
