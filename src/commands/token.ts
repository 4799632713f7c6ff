import { loadConfig } from '../app/config.ts';
import { createLogger } from '../platform/logging/logger.ts';
import { issueCliToken } from '../modules/auth/service.ts';
import { loadSigningKey } from '../modules/auth/signingKeys.ts';
import { type Flags, UsageError, flag, parseDurationSeconds, requiredFlag } from './args.ts';
import { withDatabase } from './database.ts';

const MAX_TTL_SECONDS = 24 * 3600;

/** `token issue --email E [--ttl 15m]`: prints a bearer token on stdout, nothing else. */
export async function token(flags: Flags): Promise<number> {
  if (flags.positional[0] !== 'issue') {
    throw new UsageError('usage: backplane token issue --email E [--ttl 15m]');
  }
  const email = requiredFlag(flags, 'email');
  const ttl = parseDurationSeconds(flag(flags, 'ttl') ?? '15m');
  if (!ttl || ttl > MAX_TTL_SECONDS) {
    throw new UsageError('--ttl must be a duration such as 15m or 1h, at most 24h');
  }
  const config = loadConfig();
  const { account, issued } = await withDatabase(async (pool) => {
    const key = await loadSigningKey(pool, config.jwtPrivateKey);
    return issueCliToken(pool, key, email, ttl);
  }, { migrate: true });
  // Logged to stderr until audit events exist, so stdout stays just the token for scripts.
  createLogger(config.logLevel, { role: 'cli' }, 2).info(
    { action: 'auth.token.issued', account_id: account.id, ttl_seconds: ttl },
    'token issued by command',
  );
  console.log(issued.token);
  return 0;
}
