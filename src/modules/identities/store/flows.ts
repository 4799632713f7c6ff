import type { Queryable } from '../../../platform/db/pool.ts';

/** A sign-in or link flow started with a provider, until its callback consumes it. */
export interface Flow {
  state: string;
  provider: string;
  codeVerifier: string;
  nonce: string;
  /** Set when a signed-in account asked to link the provider. */
  linkAccountId: string | null;
  /** The session of the link's bearer token (null for a `token issue` token): the link ends with it. */
  linkSessionId: string | null;
  /** The account's token epoch at the start of a link: a lock since ends the link. */
  linkTokenEpoch: number | null;
}

/** A flow as stored: bound to its browser by the SHA-256 of the secret in that browser's cookie. */
export interface StoredFlow extends Flow {
  browserHash: Buffer;
  live: boolean;
}

export const FLOW_LIFETIME_SECONDS = 600;

const insertFlowSql = `
insert into identity_flows (state, provider, code_verifier, nonce, link_account_id, browser_hash, expires_at, link_session_id, link_token_epoch)
values ($1, $2, $3, $4, $5, $6, now() + make_interval(secs => $7), $8, $9)`;

export async function insertFlow(db: Queryable, flow: Flow, browserHash: Buffer): Promise<void> {
  await db.query(insertFlowSql, [
    flow.state,
    flow.provider,
    flow.codeVerifier,
    flow.nonce,
    flow.linkAccountId,
    browserHash,
    FLOW_LIFETIME_SECONDS,
    flow.linkSessionId,
    flow.linkTokenEpoch,
  ]);
}

// Locked until the caller's transaction ends: of two callbacks with one state, the second waits and then finds nothing.
const lockFlowSql = `
select state, provider, code_verifier, nonce, link_account_id::text, browser_hash, expires_at > now() as live,
       link_session_id::text, link_token_epoch::float8 as link_token_epoch
from identity_flows where state = $1 for update`;

/** The flow of a state, locked; the caller checks its browser before taking it. */
export async function lockFlow(tx: Queryable, state: string): Promise<StoredFlow | undefined> {
  const result = await tx.query<{
    state: string;
    provider: string;
    code_verifier: string;
    nonce: string;
    link_account_id: string | null;
    link_session_id: string | null;
    link_token_epoch: number | null;
    browser_hash: Buffer;
    live: boolean;
  }>(lockFlowSql, [state]);
  const row = result.rows[0];
  return row
    ? {
        state: row.state,
        provider: row.provider,
        codeVerifier: row.code_verifier,
        nonce: row.nonce,
        linkAccountId: row.link_account_id,
        linkSessionId: row.link_session_id,
        linkTokenEpoch: row.link_token_epoch,
        browserHash: row.browser_hash,
        live: row.live,
      }
    : undefined;
}

const deleteFlowSql = `delete from identity_flows where state = $1`;

/** Deleting is what makes a state single-use. */
export async function deleteFlow(tx: Queryable, state: string): Promise<void> {
  await tx.query(deleteFlowSql, [state]);
}

const deleteExpiredFlowsSql = `
delete from identity_flows where state in (
  select state from identity_flows where expires_at < now() order by expires_at limit $1 for update skip locked
)`;

/** Flows abandoned in the browser; removed a bounded batch at a time as new flows start. */
export async function deleteExpiredFlows(db: Queryable, limit: number): Promise<number> {
  return (await db.query(deleteExpiredFlowsSql, [limit])).rowCount ?? 0;
}
