import type { Queryable } from '../../../platform/db/pool.ts';
import { PG, pgCode } from '../../../platform/db/pgErrors.ts';
import { AuthError } from '../errors.ts';
import { roleGrants } from '../permissions.ts';

export interface Role {
  name: string;
  permissions: string[];
  builtin: boolean;
  description: string;
  version: number;
  updatedAt: Date;
}

interface RoleRow {
  name: string;
  permissions: string[];
  builtin: boolean;
  description: string;
  version: number;
  updated_at: Date;
}

const toRole = (row: RoleRow): Role => ({
  name: row.name,
  builtin: row.builtin,
  ...roleGrants(row),
  version: row.version,
  updatedAt: row.updated_at,
});

const insertRoleSql = `
insert into roles (name, permissions, description) values ($1, $2::text[], $3)
returning name, permissions, builtin, description, version, updated_at`;

export async function insertRole(db: Queryable, name: string, permissions: string[], description = ''): Promise<Role> {
  try {
    const result = await db.query<RoleRow>(insertRoleSql, [name, permissions, description]);
    return toRole(result.rows[0]!);
  } catch (error) {
    if (pgCode(error) === PG.uniqueViolation) {
      throw new AuthError('role_exists', `The role ${name} exists.`, { cause: error });
    }
    throw error;
  }
}

const selectRolesSql = `
select name, permissions, builtin, description, version, updated_at from roles order by name`;

export async function listRoles(db: Queryable): Promise<Role[]> {
  const result = await db.query<RoleRow>(selectRolesSql);
  return result.rows.map(toRole);
}

const selectRoleSql = `
select name, permissions, builtin, description, version, updated_at from roles where name = $1`;

export async function findRole(db: Queryable, name: string): Promise<Role | undefined> {
  const result = await db.query<RoleRow>(selectRoleSql, [name]);
  return result.rows[0] ? toRole(result.rows[0]) : undefined;
}

const updateRolePermissionsSql = `
update roles set permissions = $2::text[], version = version + 1, updated_at = now()
where name = $1 and not builtin
returning name, permissions, builtin, description, version, updated_at`;

export async function updateRolePermissions(db: Queryable, name: string, permissions: string[]): Promise<Role | undefined> {
  const result = await db.query<RoleRow>(updateRolePermissionsSql, [name, permissions]);
  return result.rows[0] ? toRole(result.rows[0]) : undefined;
}

const insertGrantSql = `
insert into account_roles (account_id, role_name) values ($1, $2)
on conflict do nothing`;

export async function grantRole(db: Queryable, accountId: string, roleName: string): Promise<void> {
  try {
    await db.query(insertGrantSql, [accountId, roleName]);
  } catch (error) {
    if (pgCode(error) === PG.foreignKeyViolation) {
      throw new AuthError('role_not_found', `There is no role ${roleName}.`, { cause: error });
    }
    throw error;
  }
}

/** A granted role as the grant queries read it: a built-in role's entries come from the code. */
type GrantRow = Pick<RoleRow, 'name' | 'builtin' | 'permissions' | 'description'>;

const selectGrantsSql = `
select ar.account_id, r.name, r.builtin, r.permissions, r.description
from account_roles ar
join roles r on r.name = ar.role_name`;

/** Every account's permission entries: the whole table the bearer check keeps in memory. */
export async function loadGrants(db: Queryable): Promise<Map<string, string[]>> {
  const result = await db.query<GrantRow & { account_id: string }>(selectGrantsSql);
  const byAccount = new Map<string, string[]>();
  for (const row of result.rows) {
    byAccount.set(row.account_id, [...(byAccount.get(row.account_id) ?? []), ...roleGrants(row).permissions]);
  }
  return byAccount;
}

const selectAccountGrantsSql = `
select r.name, r.builtin, r.permissions, r.description
from account_roles ar
join roles r on r.name = ar.role_name
where ar.account_id = $1`;

/** One account's permission entries, to confirm a denial the cache may not have caught up with. */
export async function loadAccountGrants(db: Queryable, accountId: string): Promise<string[]> {
  const result = await db.query<GrantRow>(selectAccountGrantsSql, [accountId]);
  return result.rows.flatMap((row) => roleGrants(row).permissions);
}

// Serialises writers of one role name, including its creation, when no row exists to lock yet.
const lockRoleSql = `
select pg_advisory_xact_lock(hashtextextended('backplane.roles:' || $1, 0))`;

export async function lockRole(tx: Queryable, name: string): Promise<void> {
  await tx.query(lockRoleSql, [name]);
}
