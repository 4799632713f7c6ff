import type { StatementRunner } from './statementRunner.ts';

/** One attempt of one job: a job taken over, released or cancelled has moved on, and its old holder writes nothing. */
export interface AttemptKey {
  id: string;
  attempt: number;
}

/**
 * The attempts by ascending id: statements that lock several jobs (completion, renewal, release)
 * lock them in one order, so two of them from one instance cannot deadlock.
 */
export function inIdOrder(attempts: readonly AttemptKey[]): AttemptKey[] {
  return [...attempts].sort((a, b) => a.id.length - b.id.length || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

// Many attempts in one statement: the worker gathers the completions that arrive while the
// previous statement runs. An attempt no longer this instance's (cancelled, taken over) is left alone.
const completeJobsSql = `
update queue_jobs j
set state = 'completed', finalized_at = now(), locked_by = null, locked_until = null
from unnest($1::bigint[], $2::int[]) as done(id, attempt)
where j.id = done.id and j.attempts = done.attempt and j.locked_by = $3 and j.state = 'running'
returning j.id::text`;

/** The ids of the attempts marked completed; the others were no longer this instance's. */
export async function completeJobs(db: StatementRunner, instanceId: string, attempts: readonly AttemptKey[]): Promise<Set<string>> {
  if (attempts.length === 0) {
    return new Set();
  }
  const sorted = inIdOrder(attempts);
  const result = await db.query<{ id: string }>({
    name: 'queue_complete_jobs',
    text: completeJobsSql,
    values: [sorted.map((a) => a.id), sorted.map((a) => a.attempt), instanceId],
  });
  return new Set(result.rows.map((row) => row.id));
}
