import { createRole, grantRoleToAccount } from '../modules/auth/service.ts';
import { listRoles } from '../modules/auth/store/roles.ts';
import { type Flags, UsageError, flagList } from './args.ts';
import { withDatabase } from './database.ts';

/** `roles create NAME --permission P…` · `roles grant EMAIL ROLE` · `roles list` */
export async function roles(flags: Flags): Promise<number> {
  const [action, first, second] = flags.positional;
  if (action === 'create' && first) {
    const role = await withDatabase((pool) => createRole(pool, first, flagList(flags, 'permission')), { migrate: true });
    console.log(`created role ${role.name}: ${role.permissions.join(', ') || '(no permissions)'}`);
    return 0;
  }
  if (action === 'grant' && first && second) {
    await withDatabase((pool) => grantRoleToAccount(pool, first, second), { migrate: true });
    console.log(`granted ${second} to ${first}`);
    return 0;
  }
  if (action === 'list') {
    const rows = await withDatabase((pool) => listRoles(pool), { migrate: true });
    for (const role of rows) {
      console.log(`${role.name}${role.builtin ? ' (built-in)' : ''}\t${role.permissions.join(',')}`);
    }
    return 0;
  }
  throw new UsageError('usage: backplane roles create NAME --permission P... | roles grant EMAIL ROLE | roles list');
}
