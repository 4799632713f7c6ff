import type { StatementRunner } from './statementRunner.ts';

/** One attempt of one job: a job taken over, released or cancelled has moved on, and its old holder writes nothing. */
export interface AttemptKey {
  id: string;
  attempt: number;
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
  const result = await db.query<{ id: string }>({
    name: 'queue_complete_jobs',
    text: completeJobsSql,
    values: [attempts.map((a) => a.id), attempts.map((a) => a.attempt), instanceId],
  });
  return new Set(result.rows.map((row) => row.id));
}
