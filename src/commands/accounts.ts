import { CLI_ACTOR, recordAuditEvent } from '../modules/audit/index.ts';
import { createAccount, grantRoleBy, listAccounts, lockAccountBy, withRoleChange } from '../modules/auth/index.ts';
import { withTransaction } from '../platform/db/transaction.ts';
import { type Flags, UsageError, flag, flagList, hasFlag, requiredFlag } from './args.ts';
import { withDatabase } from './database.ts';
import { printJson, printTable } from './output.ts';

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) {
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

/** `accounts create --email E [--role R]… [--password-stdin]` · `accounts list` */
export async function accounts(flags: Flags): Promise<number> {
  const [action] = flags.positional;
  if (action === 'create') {
    const email = requiredFlag(flags, 'email');
    const password = hasFlag(flags, 'password-stdin') ? await readStdin() : undefined;
    if (password !== undefined && password.length < 12) {
      throw new UsageError('the password must have at least 12 characters');
    }
    const roles = flagList(flags, 'role');
    const account = await withDatabase(
      (pool) =>
        withRoleChange(pool, recordAuditEvent, async (tx) => {
          const created = await createAccount(tx, email, password);
          for (const role of roles) {
            // The operator at the shell holds every permission; the same rule as the API decides (ADR 0013).
            await grantRoleBy(tx, recordAuditEvent, { email, role }, { actor: CLI_ACTOR });
          }
          return created;
        }),
      { schema: 'current' },
    );
    console.log(`created account ${account.email} (${account.id})${roles.length ? ` with roles ${roles.join(', ')}` : ''}`);
    if (!password) {
      console.log(`it has no password; get a token with: npx backplane token issue --email ${account.email}`);
    }
    return 0;
  }
  if (action === 'list') {
    const rows = await withDatabase((pool) => listAccounts(pool), { schema: 'current' });
    const entries = rows.map((row) => ({ id: row.id, email: row.email, roles: row.roles, locked: row.locked, created_at: row.createdAt.toISOString() }));
    if (hasFlag(flags, 'json')) {
      printJson({ accounts: entries });
    } else {
      printTable(
        ['EMAIL', 'ID', 'ROLES', 'LOCKED'],
        entries.map((entry) => [entry.email, entry.id, entry.roles.join(','), entry.locked ? 'locked' : '']),
      );
    }
    return 0;
  }
  if (action === 'lock' || action === 'unlock') {
    const email = requiredFlag(flags, 'email');
    const locked = action === 'lock';
    const account = await withDatabase(
      (pool) =>
        // The same operation as POST /ops/accounts/{id}/lock (ADR 0128).
        withTransaction(pool, (tx) => lockAccountBy(tx, recordAuditEvent, { email }, locked, flag(flags, 'reason'), { actor: CLI_ACTOR })),
      { schema: 'current' },
    );
    // Every instance refuses its tokens within about a second (ADR 0064).
    console.log(`${locked ? 'locked' : 'unlocked'} account ${account.email} (${account.id})`);
    return 0;
  }
  throw new UsageError(
    'usage: backplane accounts create --email E [--role R]... [--password-stdin] | accounts list | accounts lock|unlock --email E [--reason R]',
  );
}
