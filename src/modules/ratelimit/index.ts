import type { Logger } from 'pino';
import type { Registry } from '../../platform/metrics/registry.ts';
import { rateLimitStatuses } from './errors.ts';
import { createRateLimiter } from './limiter.ts';
import type { LimiterName, RateLimitSettings } from './limiters.ts';
import { limitRequestsPerAddress, refuseKnownFloods } from './middleware.ts';
import type { StatementRunner } from './store.ts';

export interface RateLimitModuleDeps {
  /** A pool reserved for decisions, so they never wait behind other queries for a connection. */
  db: StatementRunner;
  /** Its size: statements in flight at once. */
  connections: number;
  limits: RateLimitSettings;
  logger: Logger;
  registry: Registry;
  /** Bound on one decision before the local fallback decides (250 ms by default). */
  decisionTimeoutMs?: number;
}

export { cleanupRateLimitBuckets } from './cleanup.ts';
export { rateLimitStatuses, RateLimitError } from './errors.ts';
export { rateLimitHeaders, retryAfterSeconds } from './headers.ts';
export { createRateLimiter, type RateLimiter } from './limiter.ts';
export { DEFAULT_RATE_LIMITS, LIMITER_NAMES, addressKey, mfaChangeKey, signInKey, type LimiterName, type RateLimitSettings } from './limiters.ts';
export { countsPerAddress, limitRequestsPerAddress, spendAttempt } from './middleware.ts';
export type { Decision, LimitSource, RateLimit } from './rules.ts';

export function createRateLimitModule(deps: RateLimitModuleDeps) {
  const limiter = createRateLimiter<LimiterName>({
    db: deps.db,
    limits: deps.limits,
    logger: deps.logger,
    registry: deps.registry,
    maxInFlight: deps.connections,
    decisionTimeoutMs: deps.decisionTimeoutMs,
  });
  return {
    limiter,
    perAddress: limitRequestsPerAddress(limiter),
    refuseFromMemory: refuseKnownFloods(limiter),
    statuses: rateLimitStatuses,
  };
}
