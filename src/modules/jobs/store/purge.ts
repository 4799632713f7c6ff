// Imported directly by the retention task threads (not through index.ts), so a thread loads no HTTP code.
import type { Queryable } from '../../../platform/db/pool.ts';

// Batches keep each statement short; the caller repeats until a batch comes back short.
const purgeDefinitionHistorySql = `
with doomed as (
  select id from job_definition_history where changed_at < $1 order by id limit $2
)
delete from job_definition_history h using doomed where h.id = doomed.id`;

/** Deletes up to `limit` history rows older than the cutoff; returns how many. */
export async function purgeDefinitionHistory(db: Queryable, cutoff: Date, limit: number): Promise<number> {
  return (await db.query(purgeDefinitionHistorySql, [cutoff, limit])).rowCount ?? 0;
}

const purgeFinishedRunsSql = `
with doomed as (
  select id from job_runs
  where created_at < $1 and state in ('succeeded', 'failed')
  order by created_at
  limit $2
)
delete from job_runs r using doomed where r.id = doomed.id`;

/** Deletes up to `limit` finished runs created before the cutoff; queued and running runs stay. */
export async function purgeFinishedRuns(db: Queryable, cutoff: Date, limit: number): Promise<number> {
  return (await db.query(purgeFinishedRunsSql, [cutoff, limit])).rowCount ?? 0;
}
