import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type SecretBox, createSecretBox, parseEncryptionKeys } from '../platform/secrets/secretBox.ts';
import { type Config, ConfigError } from './config.ts';

/** The box for secrets at rest, from the key text in force (see encryptionKeyText). */
export function openSecretBox(config: Config): SecretBox {
  return createSecretBox(parseEncryptionKeys(encryptionKeyText(config))!);
}

/**
 * The encryption key text: APP_ENCRYPTION_KEY, or in development a key generated once into the
 * data folder (refused when NODE_ENV=production, where losing it would lose the secrets). Worker
 * threads that open secrets (token revocation) are given this text.
 */
export function encryptionKeyText(config: Config): string {
  if (config.encryptionKey) {
    if (!parseEncryptionKeys(config.encryptionKey)) {
      throw new ConfigError('APP_ENCRYPTION_KEY must be one or more comma-separated 32-byte keys in base64 or hex');
    }
    return config.encryptionKey;
  }
  if (config.production) {
    throw new ConfigError('APP_ENCRYPTION_KEY is required when NODE_ENV=production');
  }
  const file = join(config.dataDir, 'encryption.key');
  if (!existsSync(file)) {
    mkdirSync(config.dataDir, { recursive: true });
    try {
      writeFileSync(file, randomBytes(32).toString('base64'), { mode: 0o600, flag: 'wx' });
    } catch (error) {
      // Another process created it first; use theirs.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw error;
      }
    }
  }
  return readFileSync(file, 'utf8').trim();
}
