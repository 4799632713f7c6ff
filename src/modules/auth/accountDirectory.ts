import type { Queryable } from '../../platform/db/pool.ts';
import { createAccount } from './service.ts';
import { deleteAccount, findAccountByEmail, findAccountById, lockAccount } from './store/accounts.ts';
import { holdAccountAtEpoch, holdLiveSession } from './store/sessions.ts';

type AccountRef = { id: string; email: string };
const refOf = (account: AccountRef | undefined): AccountRef | undefined => (account ? { id: account.id, email: account.email } : undefined);

/** The accounts table as other modules may use it (third-party sign-in): always in the caller's transaction. */
export const accountDirectory = {
  findById: async (tx: Queryable, id: string) => refOf(await findAccountById(tx, id)),
  findByEmail: async (tx: Queryable, email: string) => refOf(await findAccountByEmail(tx, email)),
  /** A new account without a password. */
  create: async (tx: Queryable, email: string) => refOf(await createAccount(tx, email, undefined))!,
  lockForDeletion: (tx: Queryable, id: string) => lockAccount(tx, id),
  delete: async (tx: Queryable, id: string) => void (await deleteAccount(tx, id)),
  /**
   * True while the sign-in of a bearer token has not ended (ADR 0064); held until the transaction
   * ends. The account first, as a deletion locks it before its sessions (no deadlock).
   */
  holdSignIn: async (tx: Queryable, signIn: { accountId: string; sessionId: string | null; tokenEpoch: number }) =>
    (await holdAccountAtEpoch(tx, signIn.accountId, signIn.tokenEpoch)) &&
    (signIn.sessionId === null || (await holdLiveSession(tx, signIn.accountId, signIn.sessionId))),
  hasPassword: async (tx: Queryable, id: string) => Boolean((await findAccountById(tx, id))?.passwordHash),
};
