import type { Logger } from 'pino';
import type { Registry } from '../../platform/metrics/registry.ts';
import { definePart } from '../../platform/module.ts';
import { ratelimitCleanupJob } from './cleanupJob.ts';
import { rateLimitStatuses } from './errors.ts';
import { createRateLimiter } from './limiter.ts';
import { POD_BATCHING } from './podClient.ts';
import type { LimiterName, RateLimitSettings } from './limiters.ts';
import { limitRequestsPerAddress, refuseKnownFloods } from './middleware.ts';
import type { StatementRunner, TakeBuckets } from './store.ts';
import { type RateLimitOpsNeeds, createRateLimitOps } from './opsService.ts';
import { rateLimitOpsRoutes } from './opsRoutes.ts';

export interface RateLimitNeeds {
  /**
   * Where decisions are made: `pool`, reserved for them so they never wait behind other queries for
   * a connection (`connections` is its size: statements in flight at once); or `pod`, the primary
   * of a `backplane serve` deciding for all its instances (ADR 0020, amendment 2026-11-25).
   */
  decide: { pool: StatementRunner; connections: number } | { pod: TakeBuckets };
  limits: RateLimitSettings;
  logger: Logger;
  registry: Registry;
  /** The one bound on a decision, connection wait included, before this instance decides alone (2 s by default). */
  decisionTimeoutMs?: number;
  /** Running instances across the cluster as last read, once every one has counted this one (undefined until then): deciding alone, each grants its share. */
  liveInstances: () => number | undefined;
  /** What the operator's lookup and clearing of limits use (ADR 0128). */
  ops: RateLimitOpsNeeds;
}

/** The readiness entry: failing while this instance decides alone, never failing /readyz (ADR 0020). */
export interface RateLimitReadinessCheck {
  name: 'ratelimit';
  failure: string;
  optional: true;
  run(): Promise<void>;
  since(): Date | undefined;
}

export { cleanupRateLimitBuckets } from './cleanup.ts';
export { ratelimitCleanupJob } from './cleanupJob.ts';
export { rateLimitStatuses, RateLimitError } from './errors.ts';
export { joinRateLimitHeaders, rateLimitHeaders, retryAfterSeconds } from './headers.ts';
export { DEFAULT_DECISION_TIMEOUT_MS, createRateLimiter, type RateLimiter } from './limiter.ts';
export { createStatementMetrics } from './metrics.ts';
export { podBuckets, type PodChannel } from './podClient.ts';
export { createPodDecisions, isPodTake, type PodDecisions } from './podDecisions.ts';
export type { TakeBuckets } from './store.ts';
export type { CoveredKey, RateLimitSubject } from './opsService.ts';
export { DEFAULT_RATE_LIMITS, LIMITER_NAMES, addressKey, mfaChangeKey, signInAddressKey, signInKey, type LimiterName, type RateLimitSettings } from './limiters.ts';
export { countsPerAddress, limitRequestsPerAddress, spendAttempt, type SpentAttempt } from './middleware.ts';
export type { Decision, LimitSource, RateLimit } from './rules.ts';
export { type CountedBeat, type ShareCount, UNCOUNTED, countShares, shareDivisor } from './shareCount.ts';

/** Limits shared by every instance, decided in PostgreSQL (GCRA), with each instance's share when it must decide alone. */
export const rateLimitModule = definePart({
  name: 'ratelimit',
  /** Audit action → what the event records: the catalogue (ADR 0120); names are public API. */
  auditActions: {
    'ratelimit.buckets.cleared': 'Rate-limit counters were cleared',
  },
  permissions: {
    'ops.ratelimits.read': 'Look up which limits cover an email or address, and whether they block it',
    'ops.ratelimits.write': 'Clear the limits that cover an email or address, on every instance',
  },
  routes: rateLimitOpsRoutes,
  statuses: rateLimitStatuses,
  jobs: [ratelimitCleanupJob],
  create(needs: RateLimitNeeds) {
    const limiter = createRateLimiter<LimiterName>({
      ...('pod' in needs.decide
        ? { take: needs.decide.pod, ...POD_BATCHING }
        : { db: needs.decide.pool, maxInFlight: needs.decide.connections }),
      limits: needs.limits,
      logger: needs.logger,
      registry: needs.registry,
      decisionTimeoutMs: needs.decisionTimeoutMs,
      liveInstances: needs.liveInstances,
    });
    // The pod's primary warms the pod's connections itself.
    if ('pool' in needs.decide) {
      void limiter.warm();
    }
    const readinessCheck: RateLimitReadinessCheck = {
      name: 'ratelimit',
      failure: 'rate limits are decided by this instance alone, with its share of each limit, until the database decides in time again',
      optional: true,
      run: async () => {
        if (limiter.aloneSince()) {
          throw new Error('deciding alone');
        }
      },
      since: () => limiter.aloneSince(),
    };
    return {
      api: {
        limiter,
        /** The per-address limit on /auth, before the body is read. */
        perAddress: limitRequestsPerAddress(limiter),
        /** A flood's refusals, known from memory, answered before Koa. */
        refuseFromMemory: refuseKnownFloods(limiter),
      },
      routeDeps: createRateLimitOps(needs.ops, limiter, needs.limits, needs.logger),
      readiness: [readinessCheck],
    };
  },
});
