import type { Queryable } from '../../../platform/db/pool.ts';

export interface SessionRow {
  id: string;
  account_id: string;
  email: string;
  family_id: string;
  methods: string[];
  rotated: boolean;
  usable: boolean;
  token_epoch: number;
}

// No session for a locked or deleted account, whichever sign-in path asks (ADR 0064); a rotation
// keeps its family's epoch, so a lock and unlock in between cannot hand out a live session.
const insertSessionSql = `
insert into sessions (account_id, token_hash, family_id, methods, expires_at, user_agent, client_ip, token_epoch)
select a.id, $2, coalesce($3::uuid, gen_random_uuid()), $4, now() + make_interval(secs => $5), $6, $7::inet, a.token_epoch
from accounts a where a.id = $1 and a.locked_at is null and ($8::bigint is null or a.token_epoch = $8)
returning id, token_epoch::float8 as token_epoch`;

/** The new session's id and token epoch; undefined when the account is locked, gone, or past tokenEpoch. */
export async function insertSession(
  tx: Queryable,
  session: {
    accountId: string;
    tokenHash: Buffer;
    familyId: string | null;
    methods: string[];
    ttlSeconds: number;
    userAgent: string;
    clientIp: string | null;
    tokenEpoch: number | null;
  },
): Promise<{ id: string; tokenEpoch: number } | undefined> {
  const result = await tx.query<{ id: string; token_epoch: number }>(insertSessionSql, [
    session.accountId,
    session.tokenHash,
    session.familyId,
    session.methods,
    session.ttlSeconds,
    session.userAgent,
    session.clientIp,
    session.tokenEpoch,
  ]);
  const row = result.rows[0];
  return row ? { id: row.id, tokenEpoch: row.token_epoch } : undefined;
}

// The row is locked, so two instances presenting the same token serialise: one rotates, one sees reuse.
const lockSessionByTokenSql = `
select s.id, s.account_id, a.email, s.family_id, s.methods, s.token_epoch::float8 as token_epoch,
       s.rotated_at is not null as rotated,
       (s.revoked_at is null and s.rotated_at is null and s.expires_at > now() and a.locked_at is null
        and s.token_epoch = a.token_epoch) as usable
from sessions s join accounts a on a.id = s.account_id
where s.token_hash = $1
for update of s`;

export async function lockSessionByToken(tx: Queryable, tokenHash: Buffer): Promise<SessionRow | undefined> {
  const result = await tx.query<SessionRow>(lockSessionByTokenSql, [tokenHash]);
  return result.rows[0];
}

// The account is held first (key share, as the new session's foreign key will): a deletion, which
// locks the account before its sessions, then waits or goes first instead of deadlocking.
const findFamilyByTokenSql = `
select s.family_id from sessions s join accounts a on a.id = s.account_id
where s.token_hash = $1
for key share of a`;

/** The family of a refresh token, its session not yet locked: the caller locks the family first. */
export async function findFamilyByToken(db: Queryable, tokenHash: Buffer): Promise<string | undefined> {
  const result = await db.query<{ family_id: string }>(findFamilyByTokenSql, [tokenHash]);
  return result.rows[0]?.family_id;
}

// Rotations and revocations of one family take turns, so a revocation sees every session a
// rotation added (a row lock alone would miss a row inserted after the revoking statement began).
const lockSessionFamilySql = `select pg_advisory_xact_lock(hashtextextended('backplane.session_family:' || $1, 0))`;

export async function lockSessionFamily(tx: Queryable, familyId: string): Promise<void> {
  await tx.query(lockSessionFamilySql, [familyId]);
}

const findAccountSessionFamilySql = `select family_id from sessions where id = $1 and account_id = $2`;

/** The family of one of the account's sessions; undefined for another account's session. */
export async function findAccountSessionFamily(db: Queryable, accountId: string, sessionId: string): Promise<string | undefined> {
  const result = await db.query<{ family_id: string }>(findAccountSessionFamilySql, [sessionId, accountId]);
  return result.rows[0]?.family_id;
}

const markSessionRotatedSql = `update sessions set rotated_at = now() where id = $1`;

export async function markSessionRotated(tx: Queryable, id: string): Promise<void> {
  await tx.query(markSessionRotatedSql, [id]);
}

const revokeFamilySql = `
update sessions set revoked_at = now() where family_id = $1 and revoked_at is null`;

export async function revokeSessionFamily(tx: Queryable, familyId: string): Promise<number> {
  const result = await tx.query(revokeFamilySql, [familyId]);
  return result.rowCount ?? 0;
}

const findSessionIdByTokenSql = `select id from sessions where token_hash = $1 and account_id = $2`;

export async function findAccountSessionByToken(db: Queryable, accountId: string, tokenHash: Buffer): Promise<string | undefined> {
  const result = await db.query<{ id: string }>(findSessionIdByTokenSql, [tokenHash, accountId]);
  return result.rows[0]?.id;
}

const selectSessionRevokedSql = `select revoked_at is not null as revoked from sessions where id = $1`;

/** True when the session was revoked or no longer exists (its account was deleted). */
export async function isSessionEnded(db: Queryable, id: string): Promise<boolean> {
  const result = await db.query<{ revoked: boolean }>(selectSessionRevokedSql, [id]);
  return result.rows[0]?.revoked ?? true;
}

// Shared locks: a sign-out, lock or deletion of the account waits until the caller's transaction ends.
const holdLiveSessionSql = `
select 1 from sessions
where id = $1 and account_id = $2 and revoked_at is null and expires_at > now()
for share`;

/** True, and the session held until the transaction ends, when the account's session has not ended. */
export async function holdLiveSession(tx: Queryable, accountId: string, sessionId: string): Promise<boolean> {
  return ((await tx.query(holdLiveSessionSql, [sessionId, accountId])).rowCount ?? 0) > 0;
}

const holdAccountAtEpochSql = `
select 1 from accounts where id = $1 and locked_at is null and token_epoch = $2 for share`;

/** True, and the account held until the transaction ends, when it is unlocked and still at that token epoch. */
export async function holdAccountAtEpoch(tx: Queryable, accountId: string, tokenEpoch: number): Promise<boolean> {
  return ((await tx.query(holdAccountAtEpochSql, [accountId, tokenEpoch])).rowCount ?? 0) > 0;
}
