import type pg from 'pg';
import type { RecordAudit } from '../../platform/audit.ts';
import type { ChangedBy } from '../../platform/caller.ts';
import { withTransaction } from '../../platform/db/transaction.ts';
import { AuthError } from './errors.ts';
import { checkRoleName, normalizePermissions } from './service.ts';
import { type Role, findRole, insertRole, listRoles, lockRole, updateRolePermissions } from './store/roles.ts';

/** The audit trail, a port filled in by src/app/ and the commands. */
export type RecordRoleAudit = RecordAudit;

export interface RolePut {
  name: string;
  permissions: string[];
  reason: string;
  /** The version last read (0 for a role expected not to exist); another current version is a conflict. */
  version?: number | undefined;
}

/**
 * Creates a custom role or replaces its permissions, with its audit event in the same
 * transaction. Built-in roles are refused; the same permissions change nothing.
 */
export async function putRole(pool: pg.Pool, recordAudit: RecordRoleAudit, put: RolePut, context: ChangedBy): Promise<{ role: Role; created: boolean }> {
  checkRoleName(put.name);
  const permissions = normalizePermissions(put.permissions);
  return withTransaction(pool, async (tx) => {
    await lockRole(tx, put.name);
    const current = await findRole(tx, put.name);
    if (current?.builtin) {
      throw new AuthError('role_builtin', `${put.name} is a built-in role: it cannot be changed.`);
    }
    const currentVersion = current?.version ?? 0;
    if (put.version !== undefined && put.version !== currentVersion) {
      throw new AuthError('role_version_conflict', `${put.name} is at version ${currentVersion}, not ${put.version}: read it again and retry.`);
    }
    if (current && current.permissions.join('\n') === permissions.join('\n')) {
      return { role: current, created: false };
    }
    const role = current ? (await updateRolePermissions(tx, put.name, permissions))! : await insertRole(tx, put.name, permissions);
    await recordAudit(tx, {
      action: current ? 'auth.role.changed' : 'auth.role.created',
      actor: context.actor,
      resource: { type: 'role', id: put.name },
      outcome: 'success',
      requestId: context.requestId,
      clientAddress: context.clientAddress,
      userAgent: context.userAgent,
      metadata: { old_permissions: current?.permissions ?? [], new_permissions: permissions, version: role.version, reason: put.reason },
    });
    return { role, created: !current };
  });
}

export function createRoleChanges(pool: pg.Pool, recordAudit: RecordRoleAudit) {
  return {
    list: () => listRoles(pool),
    put: (put: RolePut, context: ChangedBy) => putRole(pool, recordAudit, put, context),
  };
}

export type RoleChanges = ReturnType<typeof createRoleChanges>;
