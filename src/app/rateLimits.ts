import { type AttemptLimits, normalizeEmail } from '../modules/auth/index.ts';
import {
  DEFAULT_DECISION_TIMEOUT_MS,
  LIMITER_NAMES,
  type LimiterName,
  type RateLimitSettings,
  type RateLimiter,
  mfaChangeKey,
  signInKey,
  spendAttempt,
} from '../modules/ratelimit/index.ts';
import type { SettingsReader } from '../modules/settings/index.ts';
import { type InstrumentedPool, createPool } from '../platform/db/pool.ts';

/** Connections each instance reserves for rate-limit decisions: the statements it keeps in flight. */
export const RATE_LIMIT_CONNECTIONS = 4;

/**
 * The pool an instance reserves for rate-limit decisions, so they never queue behind other queries.
 * The limiter's bound covers the wait for a connection and the statement together; the pool's own
 * timeouts are the same bound, counted from later, so they only free a connection or a statement
 * the limiter has already stopped waiting for and never fail a decision that still fits it.
 */
export function openRateLimitPool(databaseUrl: string, applicationName: string, decisionTimeoutMs = DEFAULT_DECISION_TIMEOUT_MS): InstrumentedPool {
  return createPool({
    connectionString: databaseUrl,
    max: RATE_LIMIT_CONNECTIONS,
    applicationName,
    acquireTimeoutMs: decisionTimeoutMs,
    statementTimeoutMs: decisionTimeoutMs,
    // Decisions are bounded: they should not pay for opening connections after a quiet spell.
    idleTimeoutMs: 0,
    // The decision statement's plan does not depend on its arrays; replanning it cost 4x the work.
    sessionSettings: { plan_cache_mode: 'force_generic_plan' },
  });
}

/**
 * The limits the limiters read on every decision, from the runtime settings in memory: a change
 * applies to the next request.
 */
export function settingsRateLimits(settings: SettingsReader): RateLimitSettings {
  const limits: RateLimitSettings = {
    auth_ip: () => ({ limit: settings.integer('auth.ip_requests_per_minute'), periodSeconds: 60 }),
    auth_login: () => ({ limit: settings.integer('auth.login_attempts'), periodSeconds: settings.duration('auth.login_window') }),
    auth_mfa: () => ({ limit: settings.integer('auth.mfa_change_attempts'), periodSeconds: settings.duration('auth.login_window') }),
  };
  if (Object.keys(limits).length !== LIMITER_NAMES.length) {
    throw new Error('every limiter needs its setting');
  }
  return limits;
}

/** The sign-in module's attempt budgets, spent in the shared limiter (429 too_many_attempts when over). */
export function signInAttempts(limiter: RateLimiter<LimiterName>): AttemptLimits {
  return {
    // normalizeEmail, not the limiter's own lower-casing, decides which spellings share a budget (ADR 0063).
    spendSignIn: (email, origin) => spendAttempt(limiter, 'auth_login', signInKey(normalizeEmail(email), origin.clientAddress)),
    spendMfaChange: (accountId) => spendAttempt(limiter, 'auth_mfa', mfaChangeKey(accountId)),
  };
}
