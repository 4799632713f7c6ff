import { randomInt } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import { tokenHash } from './opaqueTokens.ts';

const ISSUER = 'Backplane';
const PERIOD_SECONDS = 30;
const RECOVERY_CODE_COUNT = 10;
// Crockford's base32 without look-alikes: 12 characters carry 60 bits.
const RECOVERY_ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

const totpFor = (secretBase32: string, email: string) =>
  new TOTP({ issuer: ISSUER, label: email, algorithm: 'SHA1', digits: 6, period: PERIOD_SECONDS, secret: Secret.fromBase32(secretBase32) });

export function newTotpSecret(email: string): { secret: string; uri: string } {
  const secret = new Secret({ size: 20 }).base32;
  return { secret, uri: totpFor(secret, email).toString() };
}

/**
 * The time step a code belongs to when it is valid now (window ±1 step), else undefined; the
 * caller stores the step so the same code is not accepted twice.
 */
export function totpStep(secretBase32: string, code: string, now = Date.now()): number | undefined {
  if (!/^\d{6}$/.test(code)) {
    return undefined;
  }
  const delta = totpFor(secretBase32, '').validate({ token: code, timestamp: now, window: 1 });
  return delta === null ? undefined : Math.floor(now / 1000 / PERIOD_SECONDS) + delta;
}

export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    const chars = Array.from({ length: 12 }, () => RECOVERY_ALPHABET[randomInt(RECOVERY_ALPHABET.length)]).join('');
    return `${chars.slice(0, 4)}-${chars.slice(4, 8)}-${chars.slice(8)}`;
  });
}

/** Codes are compared without case, spaces or dashes, as people retype them. */
export const recoveryCodeHash = (code: string): Buffer => tokenHash(code.toLowerCase().replace(/[\s-]/g, ''));
