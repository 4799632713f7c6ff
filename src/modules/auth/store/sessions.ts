import type { Queryable } from '../../../platform/db/pool.ts';

export interface SessionRow {
  id: string;
  account_id: string;
  email: string;
  family_id: string;
  methods: string[];
  rotated: boolean;
  usable: boolean;
}

// No session for a locked or deleted account, whichever sign-in path asks (ADR 0064).
const insertSessionSql = `
insert into sessions (account_id, token_hash, family_id, methods, expires_at, user_agent, client_ip)
select a.id, $2, coalesce($3::uuid, gen_random_uuid()), $4, now() + make_interval(secs => $5), $6, $7::inet
from accounts a where a.id = $1 and a.locked_at is null
returning id`;

/** The new session's id; undefined when the account is locked or gone. */
export async function insertSession(
  tx: Queryable,
  session: { accountId: string; tokenHash: Buffer; familyId: string | null; methods: string[]; ttlSeconds: number; userAgent: string; clientIp: string | null },
): Promise<string | undefined> {
  const result = await tx.query<{ id: string }>(insertSessionSql, [
    session.accountId,
    session.tokenHash,
    session.familyId,
    session.methods,
    session.ttlSeconds,
    session.userAgent,
    session.clientIp,
  ]);
  return result.rows[0]?.id;
}

// The row is locked, so two instances presenting the same token serialise: one rotates, one sees reuse.
const lockSessionByTokenSql = `
select s.id, s.account_id, a.email, s.family_id, s.methods,
       s.rotated_at is not null as rotated,
       (s.revoked_at is null and s.rotated_at is null and s.expires_at > now() and a.locked_at is null) as usable
from sessions s join accounts a on a.id = s.account_id
where s.token_hash = $1
for update of s`;

export async function lockSessionByToken(tx: Queryable, tokenHash: Buffer): Promise<SessionRow | undefined> {
  const result = await tx.query<SessionRow>(lockSessionByTokenSql, [tokenHash]);
  return result.rows[0];
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

const revokeAccountSessionSql = `
update sessions set revoked_at = now()
where family_id = (select family_id from sessions where id = $1 and account_id = $2) and revoked_at is null`;

/** Revokes the family of one of the account's sessions; another account's session is left alone. */
export async function revokeAccountSession(tx: Queryable, accountId: string, sessionId: string): Promise<number> {
  const result = await tx.query(revokeAccountSessionSql, [sessionId, accountId]);
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
