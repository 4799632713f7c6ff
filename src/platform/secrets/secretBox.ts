import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * Encrypts secrets at rest (TOTP seeds, providers' refresh tokens) with AES-256-GCM. Each value is
 * bound to a context (e.g. `identity:acme:subject`), so a sealed value moved to another row does
 * not open. The first key seals; every key opens, which allows rotation.
 */
export interface SecretBox {
  seal(plaintext: string, context: string): string;
  open(sealed: string, context: string): string;
}

export class SecretBoxError extends Error {
  override readonly name = 'SecretBoxError';
}

const FORMAT = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

const keyId = (key: Buffer) => createHash('sha256').update(key).digest('base64url').slice(0, 8);

export function createSecretBox(keys: Buffer[]): SecretBox {
  if (keys.length === 0 || keys.some((key) => key.length !== 32)) {
    throw new SecretBoxError('encryption keys must be 32 bytes each');
  }
  const byId = new Map(keys.map((key) => [keyId(key), key]));
  const sealingKey = keys[0]!;
  const sealingId = keyId(sealingKey);
  return {
    seal(plaintext, context) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', sealingKey, iv);
      cipher.setAAD(Buffer.from(context, 'utf8'));
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
      return `${FORMAT}.${sealingId}.${iv.toString('base64url')}.${body.toString('base64url')}`;
    },
    open(sealed, context) {
      const [format, id, iv, body] = sealed.split('.');
      const key = id ? byId.get(id) : undefined;
      if (format !== FORMAT || !key || !iv || !body) {
        throw new SecretBoxError('the sealed value has an unknown format or key');
      }
      const bytes = Buffer.from(body, 'base64url');
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
        decipher.setAAD(Buffer.from(context, 'utf8'));
        decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
        return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - TAG_BYTES)), decipher.final()]).toString('utf8');
      } catch (error) {
        throw new SecretBoxError('the sealed value does not open with this key and context', { cause: error });
      }
    },
  };
}

/** APP_ENCRYPTION_KEY: one or more comma-separated 32-byte keys, base64 or hex. */
export function parseEncryptionKeys(text: string): Buffer[] | undefined {
  const keys = text
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => (/^[0-9a-fA-F]{64}$/.test(part) ? Buffer.from(part, 'hex') : Buffer.from(part, 'base64')));
  return keys.length > 0 && keys.every((key) => key.length === 32) ? keys : undefined;
}
