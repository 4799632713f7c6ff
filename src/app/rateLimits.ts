import type { Worker } from 'node:cluster';
import type client from 'prom-client';
import { type AttemptLimits, accountDirectory, normalizeEmail } from '../modules/auth/index.ts';
import {
  type CoveredKey,
  type RateLimitSubject,
  DEFAULT_DECISION_TIMEOUT_MS,
  createPodDecisions,
  createStatementMetrics,
  isPodTake,
  joinRateLimitHeaders,
  LIMITER_NAMES,
  type LimiterName,
  type RateLimitSettings,
  type RateLimiter,
  addressKey,
  mfaChangeKey,
  signInAddressKey,
  signInKey,
  spendAttempt,
} from '../modules/ratelimit/index.ts';
import type { BackplaneSettingsReader } from './backplaneSettings.ts';
import { type InstrumentedPool, type Queryable, createPool } from '../platform/db/pool.ts';
import { normaliseAddress } from '../platform/http/clientAddress.ts';

/** Connections reserved for rate-limit decisions by default (DATABASE_RATELIMIT_POOL_SIZE), by the pod's primary or each instance: the statements kept in flight. */
export const RATE_LIMIT_CONNECTIONS = 4;

export interface RateLimitPoolOptions {
  /** Its size; RATE_LIMIT_CONNECTIONS unless given. */
  connections?: number;
  /** `transaction` behind PgBouncer: unnamed statements, no session settings (ADR 0092). */
  pooling?: 'session' | 'transaction';
}

/**
 * The pool an instance reserves for rate-limit decisions, so they never queue behind other queries.
 * The limiter's bound covers the wait for a connection and the statement together; the pool's own
 * timeouts are the same bound, counted from later, so they only free a connection or a statement
 * the limiter has already stopped waiting for and never fail a decision that still fits it.
 */
export function openRateLimitPool(
  databaseUrl: string,
  applicationName: string,
  decisionTimeoutMs = DEFAULT_DECISION_TIMEOUT_MS,
  options: RateLimitPoolOptions = {},
): InstrumentedPool {
  return createPool({
    connectionString: databaseUrl,
    max: options.connections ?? RATE_LIMIT_CONNECTIONS,
    pooling: options.pooling,
    applicationName,
    acquireTimeoutMs: decisionTimeoutMs,
    statementTimeoutMs: decisionTimeoutMs,
    // Decisions are bounded: they should not pay for opening connections after a quiet spell.
    idleTimeoutMs: 0,
    // The decision statement's plan does not depend on its arrays; replanning it cost 4x the work.
    sessionSettings: { plan_cache_mode: 'force_generic_plan' },
  });
}

export interface PodRateLimits {
  /** Answers this instance's rate-limit batches (its IPC messages) from now on. */
  serve(worker: Worker): void;
  close(): Promise<void>;
}

/**
 * In the primary (APP_RATELIMIT_BATCHING=pod): one decision pool for the whole pod, whose
 * statements carry every instance's keys. An instance keeps its own bound on a decision and
 * decides alone past it, so a primary that does not answer in time counts as a database that does not.
 */
export async function decideForPod(
  databaseUrl: string,
  options: RateLimitPoolOptions & { connections: number; spacingMs: number; instances: number; registry: client.Registry },
): Promise<PodRateLimits> {
  const pool = openRateLimitPool(databaseUrl, 'backplane-primary-ratelimit', DEFAULT_DECISION_TIMEOUT_MS, options);
  const decisions = createPodDecisions({
    db: pool,
    maxInFlight: options.connections,
    statementSpacingMs: options.spacingMs,
    instances: options.instances,
    sent: createStatementMetrics(options.registry),
  });
  // Opened now, so the first decisions do not pay for it; a database not up yet is retried by the decisions themselves.
  await Promise.all(Array.from({ length: options.connections }, () => pool.query('select 1').catch(() => undefined)));
  return {
    serve(worker) {
      worker.on('message', (message: unknown) => {
        if (isPodTake(message)) {
          decisions.take(message, (answer) => worker.isConnected() && worker.send(answer, () => undefined), worker.id);
        }
      });
    },
    close: () => pool.end().catch(() => undefined),
  };
}

/**
 * The limits the limiters read on every decision, from the runtime settings in memory: a change
 * applies to the next request.
 */
export function settingsRateLimits(settings: BackplaneSettingsReader): RateLimitSettings {
  const limits: RateLimitSettings = {
    auth_ip: () => ({ limit: settings.integer('auth.ip_requests_per_minute'), periodSeconds: 60 }),
    auth_login: () => ({ limit: settings.integer('auth.login_attempts'), periodSeconds: settings.duration('auth.login_window') }),
    auth_login_address: () => ({ limit: settings.integer('auth.login_address_attempts'), periodSeconds: settings.duration('auth.login_window') }),
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
    ...(normalized !== undefined && address !== undefined ? [{ limiter: 'auth_login', key: signInKey(normalized, address), covers: 'email_and_address' } as const] : []),
    ...(normalized !== undefined ? [{ limiter: 'auth_login_address', key: signInAddressKey(normalized), covers: 'email' } as const] : []),
    ...(address !== undefined ? [{ limiter: 'auth_ip', key: addressKey(address), covers: 'address' } as const] : []),
    ...(account ? [{ limiter: 'auth_mfa', key: mfaChangeKey(account.id), covers: 'account' } as const] : []),
  ];
}
