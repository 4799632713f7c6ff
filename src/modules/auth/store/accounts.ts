import type { Queryable } from '../../../platform/db/pool.ts';
import { PG, pgCode } from '../../../platform/db/pgErrors.ts';
import { AuthError } from '../errors.ts';

export interface Account {
  id: string;
  email: string;
  passwordHash: string | null;
  createdAt: Date;
}

interface AccountRow {
  id: string;
  email: string;
  password_hash: string | null;
  created_at: Date;
}

const toAccount = (row: AccountRow): Account => ({
  id: row.id,
  email: row.email,
  passwordHash: row.password_hash,
  createdAt: row.created_at,
});

const insertAccountSql = `
insert into accounts (email, password_hash) values ($1, $2)
returning id, email, password_hash, created_at`;

export async function insertAccount(db: Queryable, email: string, passwordHash: string | null): Promise<Account> {
  try {
    const result = await db.query<AccountRow>(insertAccountSql, [email, passwordHash]);
    return toAccount(result.rows[0]!);
  } catch (error) {
    if (pgCode(error) === PG.uniqueViolation) {
      throw new AuthError('account_exists', `An account with email ${email} exists.`, { cause: error });
    }
    throw error;
  }
}

const selectAccountByEmailSql = `
select id, email, password_hash, created_at from accounts where lower(email) = lower($1)`;

export async function findAccountByEmail(db: Queryable, email: string): Promise<Account | undefined> {
  const result = await db.query<AccountRow>(selectAccountByEmailSql, [email]);
  return result.rows[0] ? toAccount(result.rows[0]) : undefined;
}

const selectAccountByIdSql = `
select id, email, password_hash, created_at from accounts where id = $1`;

export async function findAccountById(db: Queryable, id: string): Promise<Account | undefined> {
  const result = await db.query<AccountRow>(selectAccountByIdSql, [id]);
  return result.rows[0] ? toAccount(result.rows[0]) : undefined;
}

export interface AccountSummary {
  id: string;
  email: string;
  roles: string[];
  createdAt: Date;
}

const selectAccountsSql = `
select a.id, a.email, a.created_at,
       coalesce(array_agg(ar.role_name order by ar.role_name) filter (where ar.role_name is not null), '{}') as roles
from accounts a
left join account_roles ar on ar.account_id = a.id
group by a.id
order by a.created_at, a.id`;

export async function listAccounts(db: Queryable): Promise<AccountSummary[]> {
  const result = await db.query<{ id: string; email: string; created_at: Date; roles: string[] }>(selectAccountsSql);
  return result.rows.map((row) => ({ id: row.id, email: row.email, roles: row.roles, createdAt: row.created_at }));
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
