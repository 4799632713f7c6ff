import { loadConfig } from '../app/config.ts';
import { CLI_ACTOR, recordAuditEvent } from '../modules/audit/index.ts';
import { LONGEST_TOKEN_TTL_SECONDS, issueCliToken } from '../modules/auth/index.ts';
import { openStoredSigningKey } from '../app/signingKeys.ts';
import { type Flags, UsageError, flag, parseDurationSeconds, requiredFlag } from './args.ts';
import { withDatabase } from './database.ts';

const MAX_TTL_SECONDS = LONGEST_TOKEN_TTL_SECONDS;

/** `token issue --email E [--ttl 15m]`: prints a bearer token on stdout, nothing else; audited. */
export async function token(flags: Flags): Promise<number> {
  if (flags.positional[0] !== 'issue') {
    throw new UsageError('usage: backplane token issue --email E [--ttl 15m]');
  }
  const email = requiredFlag(flags, 'email');
  const ttl = parseDurationSeconds(flag(flags, 'ttl') ?? '15m');
  if (!ttl || ttl > MAX_TTL_SECONDS) {
    throw new UsageError('--ttl must be a duration such as 15m, 1.5h or 90s, at most 24h');
  }
  const config = loadConfig();
  const issued = await withDatabase(
    async (pool) => {
      const key = await openStoredSigningKey(pool, config);
      const result = await issueCliToken(pool, key, email, ttl);
      // No token leaves without its trace: a failed audit write fails the command.
      await recordAuditEvent(pool, {
        action: 'auth.token.issued',
        actor: CLI_ACTOR,
        resource: { type: 'account', id: result.account.id },
        outcome: 'success',
        metadata: { email: result.account.emailNormalized, ttl_seconds: ttl, methods: ['cli'] },
      });
      return result.issued;
    },
    { schema: 'current' },
  );
  console.log(issued.token);
  return 0;
}
