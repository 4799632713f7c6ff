import type { Queryable } from '../../../platform/db/pool.ts';

/** A session or an account whose access ended at revokedAtMs; it matters until expiresAtMs. */
export interface AccessRevocation {
  sessionId: string | null;
  accountId: string | null;
  revokedAtMs: number;
  expiresAtMs: number;
  /** An account's: tokens with a lower epoch are ended; null ends all of them (a deletion). */
  tokenEpoch: number | null;
}

const selectLiveRevocationsSql = `
select session_id, account_id,
       floor(extract(epoch from revoked_at) * 1000)::float8 as revoked_at_ms,
       floor(extract(epoch from expires_at) * 1000)::float8 as expires_at_ms,
       token_epoch::float8 as token_epoch
from auth_access_revocations where expires_at > now()`;

export async function loadLiveRevocations(db: Queryable): Promise<AccessRevocation[]> {
  const result = await db.query<{
    session_id: string | null;
    account_id: string | null;
    revoked_at_ms: number;
    expires_at_ms: number;
    token_epoch: number | null;
  }>(selectLiveRevocationsSql);
  return result.rows.map((row) => ({
    sessionId: row.session_id,
    accountId: row.account_id,
    revokedAtMs: row.revoked_at_ms,
    expiresAtMs: row.expires_at_ms,
    tokenEpoch: row.token_epoch,
  }));
}
