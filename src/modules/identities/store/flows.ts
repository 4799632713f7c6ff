import type { Queryable } from '../../../platform/db/pool.ts';

/** A sign-in or link flow started with a provider, until its callback consumes it. */
export interface Flow {
  state: string;
  provider: string;
  codeVerifier: string;
  nonce: string;
  /** Set when a signed-in account asked to link the provider. */
  linkAccountId: string | null;
}

export const FLOW_LIFETIME_SECONDS = 600;

const insertFlowSql = `
insert into identity_flows (state, provider, code_verifier, nonce, link_account_id, expires_at)
values ($1, $2, $3, $4, $5, now() + make_interval(secs => $6))`;

export async function insertFlow(db: Queryable, flow: Flow): Promise<void> {
  await db.query(insertFlowSql, [flow.state, flow.provider, flow.codeVerifier, flow.nonce, flow.linkAccountId, FLOW_LIFETIME_SECONDS]);
}

// Deleting is what makes a state single-use: of two callbacks with one state, one gets the row.
const takeFlowSql = `
delete from identity_flows where state = $1
returning state, provider, code_verifier, nonce, link_account_id::text, expires_at > now() as live`;

/** The flow of a state, removed so it cannot be used again; undefined when unknown or expired. */
export async function takeFlow(db: Queryable, state: string): Promise<Flow | undefined> {
  const result = await db.query<{ state: string; provider: string; code_verifier: string; nonce: string; link_account_id: string | null; live: boolean }>(
    takeFlowSql,
    [state],
  );
  const row = result.rows[0];
  if (!row?.live) {
    return undefined;
  }
  return { state: row.state, provider: row.provider, codeVerifier: row.code_verifier, nonce: row.nonce, linkAccountId: row.link_account_id };
}

const deleteExpiredFlowsSql = `
delete from identity_flows where state in (
  select state from identity_flows where expires_at < now() order by expires_at limit $1 for update skip locked
)`;

/** Flows abandoned in the browser; removed a bounded batch at a time as new flows start. */
export async function deleteExpiredFlows(db: Queryable, limit: number): Promise<number> {
  return (await db.query(deleteExpiredFlowsSql, [limit])).rowCount ?? 0;
}
