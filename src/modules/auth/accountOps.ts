// The accounts an operator looks after: listing them, locking and unlocking with a reason, granting
// and taking roles; the API and `backplane accounts` go through the same functions (ADR 0128).
import type pg from 'pg';
import type { ChangedBy } from '../../platform/caller.ts';
import { boundedRead } from '../../platform/db/boundedRead.ts';
import type { Queryable } from '../../platform/db/pool.ts';
import { withTransaction } from '../../platform/db/transaction.ts';
import { AuthError } from './errors.ts';
import { type RecordRoleAudit, grantRoleBy, revokeRoleBy, withRoleChange } from './roleChanges.ts';
import { type AccountListFilter, selectAccountPage } from './store/accountList.ts';
import { type Account, findAccountByEmail, findAccountById, listAccountRoles, setAccountLocked } from './store/accounts.ts';

const LIST_TIMEOUT_MS = 5_000;

export interface AccountView {
  id: string;
  email: string;
  roles: string[];
  locked: boolean;
  locked_at: string | null;
  created_at: string;
}

const view = (account: { id: string; email: string; locked_at: Date | null; created_at: Date; roles: string[] }): AccountView => ({
  id: account.id,
  email: account.email,
  roles: account.roles,
  locked: account.locked_at !== null,
  locked_at: account.locked_at?.toISOString() ?? null,
  created_at: account.created_at.toISOString(),
});

/** Locks (its tokens stop working on every instance, ADR 0064) or unlocks an account, audited in the same transaction. */
export async function lockAccountBy(
  tx: Queryable,
  recordAudit: RecordRoleAudit,
  ref: { id: string } | { email: string },
  locked: boolean,
  reason: string | undefined,
  by: ChangedBy,
): Promise<Account> {
  const account = 'id' in ref ? await findAccountById(tx, ref.id) : await findAccountByEmail(tx, ref.email);
  if (!account || !(await setAccountLocked(tx, account.id, locked))) {
    throw new AuthError('account_not_found', `There is no account ${'id' in ref ? ref.id : ref.email}.`);
  }
  await recordAudit(tx, {
    action: locked ? 'auth.account.locked' : 'auth.account.unlocked',
    actor: by.actor,
    resource: { type: 'account', id: account.id },
    outcome: 'success',
    requestId: by.requestId,
    clientAddress: by.clientAddress,
    userAgent: by.userAgent,
    metadata: { email: account.emailNormalized, ...(reason ? { reason } : {}) },
  });
  return account;
}

export function createAccountOps(pool: pg.Pool, recordAudit: RecordRoleAudit) {
  const current = async (db: Queryable, id: string): Promise<AccountView> => {
    const account = await findAccountById(db, id);
    if (!account) {
      throw new AuthError('account_not_found', `There is no account ${id}.`);
    }
    return view({ id: account.id, email: account.email, locked_at: account.lockedAt, created_at: account.createdAt, roles: await listAccountRoles(db, id) });
  };
  return {
    /** Accounts by address, in keyset pages (the cursor is the last address, lower case). */
    list: async (filter: AccountListFilter) => {
      const timedOut = (cause: unknown) =>
        new AuthError('accounts_query_timeout', `The accounts query did not finish within ${LIST_TIMEOUT_MS} ms; narrow it.`, { cause });
      const rows = await boundedRead(pool, LIST_TIMEOUT_MS, timedOut, (tx) => selectAccountPage(tx, { ...filter, limit: filter.limit + 1 }));
      const page = rows.slice(0, filter.limit);
      return {
        accounts: page.map(view),
        ...(rows.length > filter.limit ? { next_cursor: Buffer.from(page.at(-1)!.sort_key).toString('base64url') } : {}),
      };
    },
    setLocked: (id: string, locked: boolean, reason: string, by: ChangedBy) =>
      withTransaction(pool, async (tx) => {
        await lockAccountBy(tx, recordAudit, { id }, locked, reason, by);
        return current(tx, id);
      }),
    /** Grants only a role whose every permission the operator holds (403 permission_not_held, audited). */
    grant: (id: string, role: string, reason: string, by: ChangedBy) =>
      withRoleChange(pool, recordAudit, async (tx) => {
        const account = await findAccountById(tx, id);
        if (!account) {
          throw new AuthError('account_not_found', `There is no account ${id}.`);
        }
        await grantRoleBy(tx, recordAudit, { email: account.email, role, reason }, by);
        return current(tx, id);
      }),
    revoke: (id: string, role: string, reason: string, by: ChangedBy) =>
      withRoleChange(pool, recordAudit, async (tx) => {
        await revokeRoleBy(tx, recordAudit, { accountId: id, role, reason }, by);
        return current(tx, id);
      }),
  };
}

export type AccountOps = ReturnType<typeof createAccountOps>;
