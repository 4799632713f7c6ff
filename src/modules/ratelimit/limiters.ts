import { addressNetwork } from '../../platform/addresses.ts';
import type { LimitSource, RateLimit } from './rules.ts';

/** The product's limiters; each name is a metric label and a RateLimit policy name. */
export const LIMITER_NAMES = ['auth_ip', 'auth_login', 'auth_login_address', 'auth_mfa'] as const;
/** One of LIMITER_NAMES. */
export type LimiterName = (typeof LIMITER_NAMES)[number];

/** What the limiters read on every decision; `src/app/` fills it from the runtime settings. */
export type RateLimitSettings = Record<LimiterName, LimitSource>;

/** The seed's defaults: 60 per minute per address; 10 per 15 minutes for sign-in and two-factor changes; 50 per 15 minutes per email. */
export const DEFAULT_RATE_LIMITS: Record<LimiterName, RateLimit> = {
  auth_ip: { limit: 60, periodSeconds: 60 },
  auth_login: { limit: 10, periodSeconds: 15 * 60 },
  auth_login_address: { limit: 50, periodSeconds: 15 * 60 },
  auth_mfa: { limit: 10, periodSeconds: 15 * 60 },
};

/** auth_ip: the client's address, IPv6 clients by their /64. */
export const addressKey = (clientAddress: string) => addressNetwork(clientAddress || 'unknown');

/** auth_login: the email as typed (trimmed, lower case) together with the client's network. */
export const signInKey = (email: string, clientAddress: string) => `${email.trim().toLowerCase()}\0${addressKey(clientAddress)}`;

/** auth_login_address: the normalised email alone, so guesses spread over many networks share one budget (ADR 0065). */
export const signInAddressKey = (normalizedEmail: string) => normalizedEmail;

/** auth_mfa: the account whose second factor changes. */
export const mfaChangeKey = (accountId: string) => accountId;
