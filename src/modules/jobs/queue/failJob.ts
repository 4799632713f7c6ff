import type { StatementRunner } from './statementRunner.ts';
import type { AttemptKey } from './completeJobs.ts';
import { appendedErrorsSql } from './errorLog.ts';

export type FailedJobState = 'retryable' | 'discarded';

// The attempt's error joins the job's last few. While attempts remain (and the handler did not give
// up) the job waits `$5` seconds as retryable; otherwise it is discarded for good.
const failJobSql = `
update queue_jobs j
set state = case when j.attempts < j.max_attempts and not $6 then 'retryable' else 'discarded' end,
    run_at = case when j.attempts < j.max_attempts and not $6 then now() + make_interval(secs => $5) else j.run_at end,
    finalized_at = case when j.attempts < j.max_attempts and not $6 then null else now() end,
    locked_by = null, locked_until = null,
    errors = ${appendedErrorsSql('j.errors', 'j.attempts', '$4')}
where j.id = $1 and j.attempts = $2 and j.locked_by = $3 and j.state = 'running'
returning j.state, j.run_at`;

/**
 * Records a failed attempt: retryable after `retryInSeconds` while attempts remain, else (or when
 * `giveUp`) discarded. Undefined when the attempt was no longer this instance's.
 */
export async function failJob(
  db: StatementRunner,
  instanceId: string,
  key: AttemptKey,
  failure: { message: string; retryInSeconds: number; giveUp: boolean },
): Promise<{ state: FailedJobState; run_at: Date } | undefined> {
  const result = await db.query<{ state: FailedJobState; run_at: Date }>({
    name: 'queue_fail_job',
    text: failJobSql,
    values: [key.id, key.attempt, instanceId, failure.message, failure.retryInSeconds, failure.giveUp],
  });
  return result.rows[0];
}

// The handler asked to run again later: the attempt is not counted, as if it had not been claimed.
const retryJobLaterSql = `
update queue_jobs j
set state = 'scheduled', attempts = j.attempts - 1, run_at = now() + make_interval(secs => $4),
    locked_by = null, locked_until = null
where j.id = $1 and j.attempts = $2 and j.locked_by = $3 and j.state = 'running'
returning j.run_at`;

/** Puts the job back as scheduled after `seconds` without spending an attempt; undefined when it was no longer this instance's. */
export async function retryJobLater(db: StatementRunner, instanceId: string, key: AttemptKey, seconds: number): Promise<Date | undefined> {
  const result = await db.query<{ run_at: Date }>({
    name: 'queue_retry_job_later',
    text: retryJobLaterSql,
    values: [key.id, key.attempt, instanceId, seconds],
  });
  return result.rows[0]?.run_at;
}
