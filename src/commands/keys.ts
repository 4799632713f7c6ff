import { ConfigError, loadConfig } from '../app/config.ts';
import { openSecretBox } from '../app/encryptionKey.ts';
import { explainSigningKeyError } from '../app/signingKeys.ts';
import { CLI_ACTOR, recordAuditEvent } from '../modules/audit/index.ts';
import { listSigningKeys, rotateSigningKey } from '../modules/auth/index.ts';
import { withTransaction } from '../platform/db/transaction.ts';
import { type Flags, UsageError, flag, hasFlag } from './args.ts';
import { withDatabase } from './database.ts';
import { printJson, printTable } from './output.ts';

const USAGE = 'usage: backplane keys rotate [--reason R] | keys list [--json]';

/** `keys rotate [--reason R]` (audited) · `keys list`: the token signing keys in the database (ADR 0068). */
export async function keys(flags: Flags): Promise<number> {
  const [action, extra] = flags.positional;
  if (extra !== undefined || (action !== 'rotate' && action !== 'list')) {
    throw new UsageError(USAGE);
  }
  const config = loadConfig();
  if (action === 'list') {
    const rows = await withDatabase((pool) => listSigningKeys(pool), { schema: 'current' });
    const entries = rows.map((key) => ({
      kid: key.kid,
      state: key.retiredAt === null ? 'signing' : 'verifying',
      created_at: key.createdAt.toISOString(),
      retired_at: key.retiredAt?.toISOString() ?? null,
      verifies_until: key.verifiesUntil?.toISOString() ?? null,
    }));
    if (hasFlag(flags, 'json')) {
      printJson({ keys: entries, from_environment: Boolean(config.jwtPrivateKey) });
    } else {
      printTable(
        ['KID', 'STATE', 'CREATED', 'VERIFIES UNTIL'],
        entries.map((key) => [key.kid, key.state, key.created_at, key.verifies_until]),
      );
    }
    return 0;
  }
  if (config.jwtPrivateKey) {
    throw new ConfigError('APP_JWT_PRIVATE_KEY is set: that key signs and the database keys are unused; rotate it by changing the variable');
  }
  const reason = flag(flags, 'reason');
  const rotation = await withDatabase(
    (pool) =>
      withTransaction(pool, async (tx) => {
        const rotated = await explainSigningKeyError(() => rotateSigningKey(tx, openSecretBox(config)));
        // No rotation without its trace: a failed audit write undoes it.
        await recordAuditEvent(tx, {
          action: 'auth.signing_key.rotated',
          actor: CLI_ACTOR,
          resource: { type: 'signing_key', id: rotated.kid },
          outcome: 'success',
          metadata: {
            retired_kid: rotated.retired?.kid ?? null,
            retired_verifies_until: rotated.retired?.verifiesUntil.toISOString() ?? null,
            deleted_kids: rotated.deleted,
            ...(reason ? { reason } : {}),
          },
        });
        return rotated;
      }),
    { schema: 'current' },
  );
  console.log(
    `key ${rotation.kid} signs from now on` +
      (rotation.retired ? `; ${rotation.retired.kid} verifies until ${rotation.retired.verifiesUntil.toISOString()}` : '') +
      '; running instances follow within a second',
  );
  return 0;
}
