import type { Queryable } from '../../../platform/db/pool.ts';

export interface AccountListFilter {
  /** Part of the address, any case. */
  email?: string | undefined;
  role?: string | undefined;
  locked?: boolean | undefined;
  /** Keyset: accounts whose lower(email) sorts after this one. */
  after?: string | undefined;
  limit: number;
}

export interface ListedAccount {
  id: string;
  email: string;
  sort_key: string;
  locked_at: Date | null;
  created_at: Date;
  roles: string[];
}

// In lower(email) order, by its unique index (accounts_email_key), which is also the keyset.
// A part of the address may match anywhere: the caller bounds the statement's time.
const selectAccountPageSql = `
select a.id::text, a.email, lower(a.email) as sort_key, a.locked_at, a.created_at,
       coalesce((select array_agg(ar.role_name order by ar.role_name) from account_roles ar where ar.account_id = a.id), '{}') as roles
from accounts a
where ($1::text is null or strpos(lower(a.email), lower($1)) > 0)
  and ($2::text is null or exists (select 1 from account_roles r where r.account_id = a.id and r.role_name = $2))
  and ($3::boolean is null or (a.locked_at is not null) = $3)
  and ($4::text is null or lower(a.email) > $4)
order by lower(a.email)
limit $5`;

export async function selectAccountPage(db: Queryable, filter: AccountListFilter): Promise<ListedAccount[]> {
  const values = [filter.email ?? null, filter.role ?? null, filter.locked ?? null, filter.after ?? null, filter.limit];
  return (await db.query<ListedAccount>(selectAccountPageSql, values)).rows;
}

const deleteGrantSql = `delete from account_roles where account_id = $1 and role_name = $2`;

/** Takes a role from an account; false when it did not hold it. */
export async function deleteGrant(db: Queryable, accountId: string, roleName: string): Promise<boolean> {
  return ((await db.query(deleteGrantSql, [accountId, roleName])).rowCount ?? 0) > 0;
}
