import { type SigningKey, SigningKeyUnreadable, loadSigningKey } from '../modules/auth/index.ts';
import type { Queryable } from '../platform/db/pool.ts';
import { type Config, ConfigError } from './config.ts';
import { openSecretBox } from './encryptionKey.ts';

/** A stored key the encryption key does not open is a configuration error: one line, naming the variable. */
export async function explainSigningKeyError<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw error instanceof SigningKeyUnreadable ? new ConfigError(error.message) : error;
  }
}

/**
 * The key that signs, after sealing what the previous release stored in clear: the primary calls
 * it once migrated (before any instance starts), commands before they sign.
 */
export function openStoredSigningKey(db: Queryable, config: Config): Promise<SigningKey> {
  return explainSigningKeyError(() => loadSigningKey(db, config.jwtPrivateKey, openSecretBox(config)));
}
