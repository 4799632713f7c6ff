import type { Queryable } from '../../../platform/db/pool.ts';
import { LEASE_EXPIRED } from './claimJobs.ts';
import { appendedErrorsSql } from './errorLog.ts';

// Jobs whose instance died during their last attempt: no attempt remains to take them over with.
const discardAbandonedJobsSql = `
with abandoned as (
  select id from queue_jobs
  where state = 'running' and locked_until < now() and attempts >= max_attempts
  limit 1000
  for update skip locked
)
update queue_jobs j
set state = 'discarded', finalized_at = now(), locked_by = null, locked_until = null,
    errors = ${appendedErrorsSql('j.errors', 'j.attempts', `'${LEASE_EXPIRED}'`)}
from abandoned
where j.id = abandoned.id`;

/** Discards jobs whose lease passed on their last attempt; the claim takes over the others. */
export async function discardAbandonedJobs(db: Queryable): Promise<number> {
  return (await db.query(discardAbandonedJobsSql)).rowCount ?? 0;
}
