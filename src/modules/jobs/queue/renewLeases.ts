import { type AttemptKey, inIdOrder } from './completeJobs.ts';
import type { StatementRunner } from './statementRunner.ts';

/** What became of a held attempt at its renewal. */
export type LeaseStatus = 'held' | 'cancelled' | 'lost';

// Every attempt this instance holds in one statement, however many run. An attempt no longer held
// says why from the statement's snapshot: cancelled by an operator, or taken over (lost).
const renewLeasesSql = `
with held as (
  select * from unnest($1::bigint[], $2::int[]) as held(id, attempt)
), renewed as (
  update queue_jobs j
  set locked_until = now() + make_interval(secs => $4)
  from held
  where j.id = held.id and j.attempts = held.attempt and j.locked_by = $3 and j.state = 'running'
  returning j.id
)
select held.id::text,
       case when renewed.id is not null then 'held' when j.state = 'cancelled' then 'cancelled' else 'lost' end as status
from held left join renewed on renewed.id = held.id left join queue_jobs j on j.id = held.id`;

/** Extends the leases of the attempts this instance holds; says, per id, whether it still holds it. */
export async function renewLeases(
  db: StatementRunner,
  instanceId: string,
  attempts: readonly AttemptKey[],
  leaseSeconds: number,
): Promise<Map<string, LeaseStatus>> {
  if (attempts.length === 0) {
    return new Map();
  }
  const sorted = inIdOrder(attempts);
  const result = await db.query<{ id: string; status: LeaseStatus }>({
    name: 'queue_renew_leases',
    text: renewLeasesSql,
    values: [sorted.map((a) => a.id), sorted.map((a) => a.attempt), instanceId, leaseSeconds],
  });
  return new Map(result.rows.map((row) => [row.id, row.status]));
}
