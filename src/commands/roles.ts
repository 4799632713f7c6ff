import { CLI_ACTOR, recordAuditEvent } from '../modules/audit/index.ts';
import { createRoleBy, grantRoleBy, listRoles, withRoleChange } from '../modules/auth/index.ts';
import { DOTTED_NAME_RULE, isPermissionName } from '../platform/declaredNames.ts';
import { type Flags, UsageError, flag, flagList, hasFlag } from './args.ts';
import { withDatabase } from './database.ts';
import { printJson, printTable } from './output.ts';

// The command's caller is the operator at the shell and database: it holds every permission (ADR 0013).
const OPERATOR = { actor: CLI_ACTOR };

/** `roles create NAME --permission P… [--reason R]` · `roles grant EMAIL ROLE [--reason R]` · `roles list`; changes are audited. */
export async function roles(flags: Flags): Promise<number> {
  const [action, first, second] = flags.positional;
  const reason = flag(flags, 'reason');
  if (action === 'create' && first) {
    const invalid = flagList(flags, 'permission').find((permission) => !isPermissionName(permission));
    if (invalid !== undefined) {
      throw new UsageError(`permission ${JSON.stringify(invalid)} is not a permission name: ${DOTTED_NAME_RULE}`);
    }
    const role = await withDatabase(
      (pool) =>
        withRoleChange(pool, recordAuditEvent, (tx) =>
          createRoleBy(tx, recordAuditEvent, { name: first, permissions: flagList(flags, 'permission'), reason }, OPERATOR),
        ),
      { schema: 'current' },
    );
    console.log(`created role ${role.name}: ${role.permissions.join(', ') || '(no permissions)'}`);
    return 0;
  }
  if (action === 'grant' && first && second) {
    await withDatabase(
      (pool) => withRoleChange(pool, recordAuditEvent, (tx) => grantRoleBy(tx, recordAuditEvent, { email: first, role: second, reason }, OPERATOR)),
      {
        schema: 'current',
      },
    );
    console.log(`granted ${second} to ${first}`);
    return 0;
  }
  if (action === 'list') {
    const rows = await withDatabase((pool) => listRoles(pool), { schema: 'current' });
    const entries = rows.map((role) => ({ name: role.name, builtin: role.builtin, permissions: role.permissions, version: role.version }));
    if (hasFlag(flags, 'json')) {
      printJson({ roles: entries });
    } else {
      printTable(
        ['ROLE', 'BUILT-IN', 'PERMISSIONS'],
        entries.map((role) => [role.name, role.builtin ? 'yes' : '', role.permissions.join(',')]),
      );
    }
    return 0;
  }
  throw new UsageError('usage: backplane roles create NAME --permission P... [--reason R] | roles grant EMAIL ROLE [--reason R] | roles list');
}
