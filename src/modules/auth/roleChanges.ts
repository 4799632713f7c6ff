import type pg from 'pg';
import type { AuditEvent, RecordAudit } from '../../platform/audit.ts';
import type { ChangedBy } from '../../platform/caller.ts';
import type { Queryable } from '../../platform/db/pool.ts';
import { withTransaction } from '../../platform/db/transaction.ts';
import { AuthError } from './errors.ts';
import { effectivePermissions, knownPermissions } from './permissions.ts';
import { checkRoleName, normalizePermissions } from './service.ts';
import { type Account, findAccountByEmail, findAccountById } from './store/accounts.ts';
import { deleteGrant } from './store/accountList.ts';
import { type Role, findRole, grantRole, insertRole, listRoles, loadAccountGrants, lockRole, updateRolePermissions } from './store/roles.ts';

/** The audit trail: the RecordAudit port of src/app/, or the commands' recordAuditEvent (which returns the event id). */
export type RecordRoleAudit = (db: Queryable, event: Parameters<RecordAudit>[1]) => Promise<unknown>;

/**
 * The permissions the actor of a change holds now. An account holds what its roles grant, read in
 * the change's transaction. The operator of `backplane` commands (`system:cli`) has shell and
 * database access, so it holds every permission (break-glass, ADR 0013); any other actor holds none.
 */
export async function heldPermissions(db: Queryable, actor: ChangedBy['actor']): Promise<Set<string>> {
  if (actor.kind === 'account') {
    return new Set(effectivePermissions(await loadAccountGrants(db, actor.id)));
  }
  return new Set(actor.kind === 'system' && actor.id === 'cli' ? knownPermissions() : []);
}

/**
 * The one rule for every change that can widen power, through the API and the commands alike: going
 * from the entries `before` to `after` may add or remove only permissions the actor holds. Returns
 * the changed permissions it does not hold, sorted; none when the change is allowed.
 */
export async function permissionsNotHeld(db: Queryable, actor: ChangedBy['actor'], before: string[], after: string[]): Promise<string[]> {
  const was = new Set(effectivePermissions(before));
  const will = new Set(effectivePermissions(after));
  const changed = knownPermissions().filter((permission) => was.has(permission) !== will.has(permission));
  if (changed.length === 0) {
    return [];
  }
  const held = await heldPermissions(db, actor);
  return changed.filter((permission) => !held.has(permission)).sort();
}

/** 403 permission_not_held, carrying the audit event of the refusal (recorded once the change is rolled back). */
class PermissionNotHeld extends AuthError {
  readonly refusal: AuditEvent;
  constructor(notHeld: string[], refusal: AuditEvent, location: string | undefined) {
    // Only known permission names reach here, so the list is short and never echoes raw input.
    super('permission_not_held', `Only permissions the caller holds can be granted or taken away; not held: ${notHeld.join(', ')}.`, {
      ...(location ? { issues: notHeld.map((permission) => ({ location, message: `${permission} is not held by the caller` })) } : {}),
    });
    this.refusal = refusal;
  }
}

type Refusal = Pick<AuditEvent, 'action' | 'resource'> & { metadata: Record<string, unknown>; location?: string };

async function refuseUnheld(tx: Queryable, by: ChangedBy, before: string[], after: string[], refusal: Refusal): Promise<void> {
  const notHeld = await permissionsNotHeld(tx, by.actor, before, after);
  if (notHeld.length > 0) {
    const { location, ...event } = refusal;
    const origin = { requestId: by.requestId, clientAddress: by.clientAddress, userAgent: by.userAgent };
    throw new PermissionNotHeld(
      notHeld,
      { ...origin, ...event, actor: by.actor, outcome: 'denied', metadata: { ...event.metadata, permissions_not_held: notHeld } },
      location,
    );
  }
}

/** Runs one role change in a transaction; a refusal for permissions not held is audited after the rollback. */
export async function withRoleChange<T>(pool: pg.Pool, recordAudit: RecordRoleAudit, change: (tx: Queryable) => Promise<T>): Promise<T> {
  try {
    return await withTransaction(pool, change);
  } catch (error) {
    if (error instanceof PermissionNotHeld) {
      await recordAudit(pool, error.refusal);
    }
    throw error;
  }
}

export interface RolePut {
  name: string;
  permissions: string[];
  reason: string;
  /** The version last read (0 for a role expected not to exist); another current version is a conflict. */
  version?: number | undefined;
}

/**
 * Creates a custom role or replaces its permissions, with its audit event in the same
 * transaction. Built-in roles are refused; the same permissions change nothing; a permission
 * added or removed that the caller does not hold is refused, whoever holds the role.
 */
export async function putRole(pool: pg.Pool, recordAudit: RecordRoleAudit, put: RolePut, context: ChangedBy): Promise<{ role: Role; created: boolean }> {
  checkRoleName(put.name);
  const permissions = normalizePermissions(put.permissions);
  return withRoleChange(pool, recordAudit, async (tx) => {
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
    const oldPermissions = current?.permissions ?? [];
    await refuseUnheld(tx, context, oldPermissions, permissions, {
      action: 'auth.role.change_denied',
      resource: { type: 'role', id: put.name },
      metadata: { old_permissions: oldPermissions, new_permissions: permissions, reason: put.reason },
      location: 'body.permissions',
    });
    const role = current ? (await updateRolePermissions(tx, put.name, permissions))! : await insertRole(tx, put.name, permissions);
    await recordAudit(tx, {
      action: current ? 'auth.role.changed' : 'auth.role.created',
      actor: context.actor,
      resource: { type: 'role', id: put.name },
      outcome: 'success',
      requestId: context.requestId,
      clientAddress: context.clientAddress,
      userAgent: context.userAgent,
      metadata: { old_permissions: oldPermissions, new_permissions: permissions, version: role.version, reason: put.reason },
    });
    return { role, created: !current };
  });
}

/** `roles create`: a new custom role (role_exists when it is there), bounded by what `by` holds; run it in withRoleChange. */
export async function createRoleBy(
  tx: Queryable,
  recordAudit: RecordRoleAudit,
  create: { name: string; permissions: string[]; reason?: string | undefined },
  by: ChangedBy,
): Promise<Role> {
  checkRoleName(create.name);
  const permissions = normalizePermissions(create.permissions);
  const reason = create.reason ? { reason: create.reason } : {};
  await refuseUnheld(tx, by, [], permissions, {
    action: 'auth.role.change_denied',
    resource: { type: 'role', id: create.name },
    metadata: { old_permissions: [], new_permissions: permissions, ...reason },
  });
  const role = await insertRole(tx, create.name, permissions);
  await recordAudit(tx, {
    action: 'auth.role.created',
    actor: by.actor,
    resource: { type: 'role', id: role.name },
    outcome: 'success',
    metadata: { old_permissions: [], new_permissions: role.permissions, version: role.version, ...reason },
  });
  return role;
}

/** Grants a role to an account when `by` holds every permission the role grants; run it in withRoleChange. */
export async function grantRoleBy(
  tx: Queryable,
  recordAudit: RecordRoleAudit,
  grant: { email: string; role: string; reason?: string | undefined },
  by: ChangedBy,
): Promise<Account> {
  const account = await findAccountByEmail(tx, grant.email);
  if (!account) {
    throw new AuthError('account_not_found', `There is no account ${grant.email}.`);
  }
  const role = await findRole(tx, grant.role);
  if (!role) {
    throw new AuthError('role_not_found', `There is no role ${grant.role}.`);
  }
  const metadata = { role: role.name, email: account.emailNormalized ?? account.email, ...(grant.reason ? { reason: grant.reason } : {}) };
  await refuseUnheld(tx, by, [], role.permissions, { action: 'auth.role.grant_denied', resource: { type: 'account', id: account.id }, metadata });
  await grantRole(tx, account.id, role.name);
  await recordAudit(tx, {
    action: 'auth.role.granted',
    actor: by.actor,
    resource: { type: 'account', id: account.id },
    outcome: 'success',
    requestId: by.requestId,
    clientAddress: by.clientAddress,
    userAgent: by.userAgent,
    metadata,
  });
  return account;
}

/** Takes a role from an account when `by` holds every permission the role grants; run it in withRoleChange. */
export async function revokeRoleBy(
  tx: Queryable,
  recordAudit: RecordRoleAudit,
  revoke: { accountId: string; role: string; reason: string },
  by: ChangedBy,
): Promise<boolean> {
  const account = await findAccountById(tx, revoke.accountId);
  if (!account) {
    throw new AuthError('account_not_found', `There is no account ${revoke.accountId}.`);
  }
  const role = await findRole(tx, revoke.role);
  if (!role) {
    throw new AuthError('role_not_found', `There is no role ${revoke.role}.`);
  }
  const metadata = { role: role.name, email: account.emailNormalized ?? account.email, reason: revoke.reason };
  await refuseUnheld(tx, by, role.permissions, [], { action: 'auth.role.revoke_denied', resource: { type: 'account', id: account.id }, metadata });
  if (!(await deleteGrant(tx, account.id, role.name))) {
    return false;
  }
  await recordAudit(tx, {
    action: 'auth.role.revoked',
    actor: by.actor,
    resource: { type: 'account', id: account.id },
    outcome: 'success',
    requestId: by.requestId,
    clientAddress: by.clientAddress,
    userAgent: by.userAgent,
    metadata,
  });
  return true;
}

export function createRoleChanges(pool: pg.Pool, recordAudit: RecordRoleAudit) {
  return {
    list: () => listRoles(pool),
    put: (put: RolePut, context: ChangedBy) => putRole(pool, recordAudit, put, context),
  };
}

export type RoleChanges = ReturnType<typeof createRoleChanges>;
