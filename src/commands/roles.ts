import { CLI_ACTOR, recordAuditEvent } from '../modules/audit/index.ts';
import { createRole, grantRoleToAccount, listRoles } from '../modules/auth/index.ts';
import { withTransaction } from '../platform/db/transaction.ts';
import { type Flags, UsageError, flag, flagList, hasFlag } from './args.ts';
import { withDatabase } from './database.ts';
import { printJson, printTable } from './output.ts';

/** `roles create NAME --permission P… [--reason R]` · `roles grant EMAIL ROLE [--reason R]` · `roles list`; changes are audited. */
export async function roles(flags: Flags): Promise<number> {
  const [action, first, second] = flags.positional;
  const reason = flag(flags, 'reason');
  if (action === 'create' && first) {
    const role = await withDatabase(
      (pool) =>
        withTransaction(pool, async (tx) => {
          const created = await createRole(tx, first, flagList(flags, 'permission'));
          await recordAuditEvent(tx, {
            action: 'auth.role.created',
            actor: CLI_ACTOR,
            resource: { type: 'role', id: created.name },
            outcome: 'success',
            metadata: { old_permissions: [], new_permissions: created.permissions, version: created.version, ...(reason ? { reason } : {}) },
          });
          return created;
        }),
      { migrate: true },
    );
    console.log(`created role ${role.name}: ${role.permissions.join(', ') || '(no permissions)'}`);
    return 0;
  }
  if (action === 'grant' && first && second) {
    await withDatabase(
      (pool) =>
        withTransaction(pool, async (tx) => {
          const account = await grantRoleToAccount(tx, first, second);
          await recordAuditEvent(tx, {
            action: 'auth.role.granted',
            actor: CLI_ACTOR,
            resource: { type: 'account', id: account.id },
            outcome: 'success',
            metadata: { role: second, email: account.email, ...(reason ? { reason } : {}) },
          });
        }),
      { migrate: true },
    );
    console.log(`granted ${second} to ${first}`);
    return 0;
  }
  if (action === 'list') {
    const rows = await withDatabase((pool) => listRoles(pool), { migrate: true });
    const entries = rows.map((role) => ({ name: role.name, builtin: role.builtin, permissions: role.permissions, version: role.version }));
    if (hasFlag(flags, 'json')) {
      printJson({ roles: entries });
    } else {
      printTable(['ROLE', 'BUILT-IN', 'PERMISSIONS'], entries.map((role) => [role.name, role.builtin ? 'yes' : '', role.permissions.join(',')]));
    }
    return 0;
  }
  throw new UsageError('usage: backplane roles create NAME --permission P... [--reason R] | roles grant EMAIL ROLE [--reason R] | roles list');
}
