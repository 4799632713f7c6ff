import { createHash, randomBytes } from 'node:crypto';

/** A bearer secret the database never sees: 32 random bytes, base64url. */
export const newOpaqueToken = (): string => randomBytes(32).toString('base64url');

/** What the database keeps of an opaque token or recovery code. */
export const tokenHash = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();
