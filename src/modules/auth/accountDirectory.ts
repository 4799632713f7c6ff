import type { Queryable } from '../../platform/db/pool.ts';
import { createAccount } from './service.ts';
import { deleteAccount, findAccountByEmail, findAccountById, lockAccount } from './store/accounts.ts';

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
  hasPassword: async (tx: Queryable, id: string) => Boolean((await findAccountById(tx, id))?.passwordHash),
};
