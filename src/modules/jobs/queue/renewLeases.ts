import type { Queryable } from '../../../platform/db/pool.ts';
import type { AttemptKey } from './completeJobs.ts';

// Every attempt this instance holds in one statement, however many run.
const renewLeasesSql = `
update queue_jobs j
set locked_until = now() + make_interval(secs => $4)
from unnest($1::bigint[], $2::int[]) as held(id, attempt)
where j.id = held.id and j.attempts = held.attempt and j.locked_by = $3 and j.state = 'running'
returning j.id::text`;

/** Extends the leases of the attempts this instance holds; returns the ids it still holds (the others were cancelled or taken over). */
export async function renewLeases(db: Queryable, instanceId: string, attempts: readonly AttemptKey[], leaseSeconds: number): Promise<Set<string>> {
  if (attempts.length === 0) {
    return new Set();
  }
  const result = await db.query<{ id: string }>(renewLeasesSql, [attempts.map((a) => a.id), attempts.map((a) => a.attempt), instanceId, leaseSeconds]);
  return new Set(result.rows.map((row) => row.id));
}
