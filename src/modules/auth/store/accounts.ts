import type { Queryable } from '../../../platform/db/pool.ts';
import { PG, pgCode } from '../../../platform/db/pgErrors.ts';
import { type ParsedEmail, normalizeEmail } from '../email.ts';
import { AuthError } from '../errors.ts';

export interface Account {
  id: string;
  /** As typed (tidied); compare and look up by `emailNormalized` only. */
  email: string;
  emailNormalized: string | null;
  passwordHash: string | null;
  lockedAt: Date | null;
  createdAt: Date;
  /** Raised by every lock; tokens and sessions issued under a lower one are ended (ADR 0064). */
  tokenEpoch: number;
}

interface AccountRow {
  id: string;
  email: string;
  email_normalized: string | null;
  password_hash: string | null;
  locked_at: Date | null;
  created_at: Date;
  token_epoch: number;
}

const toAccount = (row: AccountRow): Account => ({
  id: row.id,
  email: row.email,
  emailNormalized: row.email_normalized,
  passwordHash: row.password_hash,
  lockedAt: row.locked_at,
  createdAt: row.created_at,
  tokenEpoch: row.token_epoch,
});

const ACCOUNT_COLUMNS = 'id, email, email_normalized, password_hash, locked_at, created_at, token_epoch::float8 as token_epoch';

const insertAccountSql = `
insert into accounts (email, email_normalized, password_hash) values ($1, $2, $3)
returning ${ACCOUNT_COLUMNS}`;

/** email: a parseEmail() result, so the unique key is the normalised address. */
export async function insertAccount(db: Queryable, email: ParsedEmail, passwordHash: string | null): Promise<Account> {
  try {
    const result = await db.query<AccountRow>(insertAccountSql, [email.display, email.normalized, passwordHash]);
    return toAccount(result.rows[0]!);
  } catch (error) {
    if (pgCode(error) === PG.uniqueViolation) {
      throw new AuthError('account_exists', `An account with email ${email.normalized} exists.`, { cause: error });
    }
    throw error;
  }
}

const selectAccountByEmailSql = `select ${ACCOUNT_COLUMNS} from accounts where email_normalized = $1`;

/** Throws invalid_email (422) for an address normalizeEmail() refuses. */
export async function findAccountByEmail(db: Queryable, email: string): Promise<Account | undefined> {
  const result = await db.query<AccountRow>(selectAccountByEmailSql, [normalizeEmail(email)]);
  return result.rows[0] ? toAccount(result.rows[0]) : undefined;
}

const selectAccountByIdSql = `select ${ACCOUNT_COLUMNS} from accounts where id = $1`;

export async function findAccountById(db: Queryable, id: string): Promise<Account | undefined> {
  const result = await db.query<AccountRow>(selectAccountByIdSql, [id]);
  return result.rows[0] ? toAccount(result.rows[0]) : undefined;
}

export interface AccountSummary {
  id: string;
  email: string;
  roles: string[];
  locked: boolean;
  createdAt: Date;
}

const selectAccountsSql = `
select a.id, a.email, a.created_at, a.locked_at is not null as locked,
       coalesce(array_agg(ar.role_name order by ar.role_name) filter (where ar.role_name is not null), '{}') as roles
from accounts a
left join account_roles ar on ar.account_id = a.id
group by a.id
order by a.created_at, a.id`;

export async function listAccounts(db: Queryable): Promise<AccountSummary[]> {
  const result = await db.query<{ id: string; email: string; created_at: Date; locked: boolean; roles: string[] }>(selectAccountsSql);
  return result.rows.map((row) => ({ id: row.id, email: row.email, roles: row.roles, locked: row.locked, createdAt: row.created_at }));
}

const selectAccountRolesSql = `select role_name from account_roles where account_id = $1 order by role_name`;

export async function listAccountRoles(db: Queryable, accountId: string): Promise<string[]> {
  const result = await db.query<{ role_name: string }>(selectAccountRolesSql, [accountId]);
  return result.rows.map((row) => row.role_name);
}

const lockAccountSql = `select id from accounts where id = $1 for update`;

/** Locks the account row until the caller's transaction ends; false when there is no such account. */
export async function lockAccount(db: Queryable, id: string): Promise<boolean> {
  return ((await db.query(lockAccountSql, [id])).rowCount ?? 0) > 0;
}

const deleteAccountSql = `delete from accounts where id = $1`;

/** Deletes the account; its roles, identities and sessions go with it (on delete cascade). */
export async function deleteAccount(db: Queryable, id: string): Promise<boolean> {
  return ((await db.query(deleteAccountSql, [id])).rowCount ?? 0) > 0;
}

const setAccountLockedSql = `
update accounts set locked_at = case when $2 then coalesce(locked_at, now()) end
where id = $1`;

/** Locks (ends its access everywhere, ADR 0064) or unlocks an account; false when there is no such account. */
export async function setAccountLocked(db: Queryable, id: string, locked: boolean): Promise<boolean> {
  return ((await db.query(setAccountLockedSql, [id, locked])).rowCount ?? 0) > 0;
}
