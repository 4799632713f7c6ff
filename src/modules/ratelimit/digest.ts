import { hash } from 'node:crypto';

/** What the database stores for a limiter's key: SHA-256 of the limiter's name and the key, so no email or address is kept. */
export const bucketDigest = (limiter: string, key: string): Buffer => hash('sha256', `${limiter}\0${key}`, 'buffer');
