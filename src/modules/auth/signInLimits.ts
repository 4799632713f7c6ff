import {
  type CoveredKey,
  type LimiterName,
  type RateLimitSubject,
  type RateLimiter,
  addressKey,
  joinRateLimitHeaders,
  mfaChangeKey,
  signInAddressKey,
  signInKey,
  spendAttempt,
} from '../ratelimit/index.ts';
import type { Queryable } from '../../platform/db/pool.ts';
import { normaliseAddress } from '../../platform/addresses.ts';
import { accountDirectory } from './accountDirectory.ts';
import { normalizeEmail } from './email.ts';
import type { AttemptLimits } from './signIn.ts';

// The sign-in limits auth keeps in the ratelimit module's shared limiter.

/** The sign-in module's attempt budgets, spent in the shared limiter (429 too_many_attempts when over). */
export function signInAttempts(limiter: RateLimiter<LimiterName>): AttemptLimits {
  return {
    // normalizeEmail, not the limiter's own lower-casing, decides which spellings share a budget (ADR 0063).
    spendSignIn: async (email, origin) => {
      const normalized = normalizeEmail(email);
      // Per network first: an attempt refused there spends nothing of the email's own budget (ADR 0065).
      const network = await spendAttempt(limiter, 'auth_login', signInKey(normalized, origin.clientAddress));
      if (!network.allowed) {
        return network;
      }
      const address = await spendAttempt(limiter, 'auth_login_address', signInAddressKey(normalized));
      return address.allowed ? { allowed: true, headers: joinRateLimitHeaders(network.headers, address.headers) } : address;
    },
    spendMfaChange: (accountId) => spendAttempt(limiter, 'auth_mfa', mfaChangeKey(accountId)),
  };
}

/**
 * The keys of the limits an operator's email and/or address fall under, as spendSignIn and the
 * per-address limit compute them (ADR 0128): the operator names them, the keys stay hashed.
 */
export async function coveredRateLimitKeys(subject: RateLimitSubject, db: Queryable): Promise<CoveredKey[] | { invalid: 'email' | 'address' }> {
  let normalized: string | undefined;
  if (subject.email !== undefined) {
    try {
      normalized = normalizeEmail(subject.email);
    } catch {
      return { invalid: 'email' };
    }
  }
  const address = subject.address === undefined ? undefined : normaliseAddress(subject.address);
  if (subject.address !== undefined && address === undefined) {
    return { invalid: 'address' };
  }
  // Two-factor changes are counted per account: the email's account, when there is one.
  const account = normalized === undefined ? undefined : await accountDirectory.findByEmail(db, normalized);
  return [
    ...(normalized !== undefined && address !== undefined
      ? [{ limiter: 'auth_login', key: signInKey(normalized, address), covers: 'email_and_address' } as const]
      : []),
    ...(normalized !== undefined ? [{ limiter: 'auth_login_address', key: signInAddressKey(normalized), covers: 'email' } as const] : []),
    ...(address !== undefined ? [{ limiter: 'auth_ip', key: addressKey(address), covers: 'address' } as const] : []),
    ...(account ? [{ limiter: 'auth_mfa', key: mfaChangeKey(account.id), covers: 'account' } as const] : []),
  ];
}
