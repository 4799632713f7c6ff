import type { Queryable } from '../../../platform/db/pool.ts';

/** A provider's refresh token to revoke, still sealed under `identity:<provider>:<subject>`. */
export interface QueuedToken {
  provider: string;
  subject: string;
  tokenSealed: string;
}

const queueSql = `
insert into auth_token_revocations (provider, subject, token_sealed)
select * from unnest($1::text[], $2::text[], $3::text[])`;

/** Queues tokens in the caller's transaction: the unlink or deletion and the queue commit together. */
export async function queueTokenRevocations(db: Queryable, tokens: QueuedToken[]): Promise<void> {
  if (tokens.length === 0) {
    return;
  }
  await db.query(queueSql, [tokens.map((t) => t.provider), tokens.map((t) => t.subject), tokens.map((t) => t.tokenSealed)]);
}

export interface ClaimedRevocation extends QueuedToken {
  id: string;
  attempts: number;
}

// Oldest due first; rows another run holds (a live lease) are skipped, locked ones too.
const claimSql = `
with due as (
  select id from auth_token_revocations
  where next_attempt_at <= now() and (lease_expires_at is null or lease_expires_at <= now())
  order by next_attempt_at, id
  limit $1
  for update skip locked
)
update auth_token_revocations r
set lease_expires_at = now() + make_interval(secs => $2), claim_id = $3
from due where r.id = due.id
returning r.id::text, r.provider, r.subject, r.token_sealed, r.attempts`;

/** Takes up to `limit` due rows for this claim until the lease passes; a dead claimer's rows come back then. */
export async function claimDueRevocations(db: Queryable, claimId: string, limit: number, leaseSeconds: number): Promise<ClaimedRevocation[]> {
  const result = await db.query<{ id: string; provider: string; subject: string; token_sealed: string; attempts: number }>(claimSql, [
    limit,
    leaseSeconds,
    claimId,
  ]);
  return result.rows
    .map((row) => ({ id: row.id, provider: row.provider, subject: row.subject, tokenSealed: row.token_sealed, attempts: row.attempts }))
    .sort((a, b) => Number(a.id) - Number(b.id));
}

const deleteRevokedSql = `
delete from auth_token_revocations where id = any($1::bigint[]) and claim_id = $2`;

/** Rows revoked under this claim; a row whose lease passed and was claimed again is left to its new claim. */
export async function deleteRevoked(db: Queryable, claimId: string, ids: string[]): Promise<number> {
  return ids.length === 0 ? 0 : ((await db.query(deleteRevokedSql, [ids, claimId])).rowCount ?? 0);
}

export interface FailedRevocation {
  id: string;
  error: string;
}

export interface AbandonedRevocation {
  id: string;
  provider: string;
  subject: string;
  attempts: number;
  lastError: string;
}

// attempts + 1 failures so far: the next try waits base × 2^(attempts), at most 6 hours.
const retryLaterSql = `
update auth_token_revocations r
set attempts = r.attempts + 1,
    next_attempt_at = now() + least(make_interval(secs => $3 * power(2, r.attempts)), interval '6 hours'),
    last_error = f.error, lease_expires_at = null, claim_id = null
from unnest($1::bigint[], $2::text[]) as f(id, error)
where r.id = f.id and r.claim_id = $4 and r.attempts + 1 < $5`;

const abandonSql = `
delete from auth_token_revocations r
using unnest($1::bigint[], $2::text[]) as f(id, error)
where r.id = f.id and r.claim_id = $3 and r.attempts + 1 >= $4
returning r.id::text, r.provider, r.subject, r.attempts + 1 as attempts, f.error as last_error`;

/** Failures under this claim: retried later with backoff, or deleted once they reach maxAttempts. */
export async function recordFailures(
  db: Queryable,
  claimId: string,
  failures: FailedRevocation[],
  policy: { backoffBaseSeconds: number; maxAttempts: number },
): Promise<{ retrying: number; abandoned: AbandonedRevocation[] }> {
  if (failures.length === 0) {
    return { retrying: 0, abandoned: [] };
  }
  const ids = failures.map((f) => f.id);
  const errors = failures.map((f) => f.error.slice(0, 500));
  const retried = await db.query(retryLaterSql, [ids, errors, policy.backoffBaseSeconds, claimId, policy.maxAttempts]);
  const abandoned = await db.query<{ id: string; provider: string; subject: string; attempts: number; last_error: string }>(abandonSql, [
    ids,
    errors,
    claimId,
    policy.maxAttempts,
  ]);
  return {
    retrying: retried.rowCount ?? 0,
    abandoned: abandoned.rows.map((row) => ({ id: row.id, provider: row.provider, subject: row.subject, attempts: row.attempts, lastError: row.last_error })),
  };
}

const countOutcomesSql = `
insert into auth_token_revocation_outcomes (hour, outcome, count)
select date_trunc('hour', now()), o.outcome, o.count from unnest($1::text[], $2::bigint[]) as o(outcome, count) where o.count > 0
on conflict (hour, outcome) do update set count = auth_token_revocation_outcomes.count + excluded.count`;

const pruneOutcomesSql = `delete from auth_token_revocation_outcomes where hour < now() - interval '7 days'`;

/** Adds to this hour's outcome counts (read by the jobs overview); hours older than a week go. */
export async function countOutcomes(db: Queryable, counts: { revoked: number; retrying: number; abandoned: number }): Promise<void> {
  await db.query(countOutcomesSql, [
    ['revoked', 'retrying', 'abandoned'],
    [counts.revoked, counts.retrying, counts.abandoned],
  ]);
  await db.query(pruneOutcomesSql);
}

export interface RevocationBacklog {
  depth: number;
  due: number;
  leased: number;
  oldestDueAt: Date | null;
  dbNow: Date;
}

const backlogSql = `
select count(*)::int as depth,
       count(*) filter (where next_attempt_at <= now() and (lease_expires_at is null or lease_expires_at <= now()))::int as due,
       count(*) filter (where lease_expires_at > now())::int as leased,
       min(next_attempt_at) filter (where next_attempt_at <= now() and (lease_expires_at is null or lease_expires_at <= now())) as oldest_due_at,
       now() as db_now
from auth_token_revocations`;

/** The queue at a glance; the oldest due row is the one that has waited longest for a run to take it. */
export async function selectBacklog(db: Queryable): Promise<RevocationBacklog> {
  const row = (await db.query<{ depth: number; due: number; leased: number; oldest_due_at: Date | null; db_now: Date }>(backlogSql)).rows[0]!;
  return { depth: row.depth, due: row.due, leased: row.leased, oldestDueAt: row.oldest_due_at, dbNow: row.db_now };
}

const recentOutcomesSql = `
select outcome, sum(count)::int as count from auth_token_revocation_outcomes
where hour > date_trunc('hour', now()) - interval '24 hours' group by outcome`;

export async function selectRecentOutcomes(db: Queryable): Promise<Record<string, number>> {
  const rows = (await db.query<{ outcome: string; count: number }>(recentOutcomesSql)).rows;
  const counts: Record<string, number> = { revoked: 0, retrying: 0, abandoned: 0 };
  for (const row of rows) {
    counts[row.outcome] = row.count;
  }
  return counts;
}
