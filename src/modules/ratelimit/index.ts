import { type BackplaneContext, defineModule } from '../../platform/module.ts';
import { auditModule } from '../audit/index.ts';
import type { maintenanceSettings } from '../maintenance/index.ts';
import { releasesModule } from '../releases/index.ts';
import { type SettingsReader, settingsModule } from '../settings/index.ts';
import { type RateLimitPoolOptions, decideForPod } from './decisionPool.ts';
import { settingsRateLimits } from './settingLimits.ts';
import { ratelimitCleanupJob } from './cleanupJob.ts';
import { rateLimitStatuses } from './errors.ts';
import { createRateLimiter } from './limiter.ts';
import { POD_BATCHING } from './podClient.ts';
import type { LimiterName, RateLimitSettings } from './limiters.ts';
import { limitRequestsPerAddress, refuseKnownFloods } from './middleware.ts';
import type { StatementRunner, TakeBuckets } from './store.ts';
import { type CoveredKeys, type RateLimitSubject, createRateLimitOps } from './opsService.ts';
import type { Queryable } from '../../platform/db/pool.ts';
import { rateLimitOpsRoutes } from './opsRoutes.ts';

/** What the ratelimit module reads beyond the public context: where decisions are made, limits a test sets, the pod's configuration. */
export type RateLimitContext = BackplaneContext<RateLimitConfig> & {
  rateLimits: {
    /**
     * Where decisions are made: `pool`, reserved for them so they never wait behind other queries for
     * a connection (`connections` is its size: statements in flight at once); or `pod`, the primary
     * of a `backplane serve` deciding for all its instances (ADR 0020, amendment 2026-11-25).
     */
    decide: { pool: StatementRunner; connections: number } | { pod: TakeBuckets };
    /** The settings' limits unless given (tests). */
    limits?: RateLimitSettings | undefined;
    /** The one bound on a decision, connection wait included, before this instance decides alone (2 s by default). */
    timeoutMs?: number | undefined;
  };
};

interface RateLimitConfig {
  rateLimitBatching: 'pod' | 'instance';
  pools: { rateLimit: number };
  rateLimitSpacingMs: number;
  instances: number;
  databasePooling: RateLimitPoolOptions['pooling'];
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
export { RATE_LIMIT_CONNECTIONS, openRateLimitPool } from './decisionPool.ts';
export { createStatementMetrics } from './metrics.ts';
export { podBuckets, type PodChannel } from './podClient.ts';
export { createPodDecisions, isPodTake, type PodDecisions } from './podDecisions.ts';
export type { TakeBuckets } from './store.ts';
export type { CoveredKey, RateLimitSubject } from './opsService.ts';
export {
  DEFAULT_RATE_LIMITS,
  LIMITER_NAMES,
  addressKey,
  mfaChangeKey,
  signInAddressKey,
  signInKey,
  type LimiterName,
  type RateLimitSettings,
} from './limiters.ts';
export { countsPerAddress, limitRequestsPerAddress, spendAttempt, type SpentAttempt } from './middleware.ts';
export type { Decision, LimitSource, RateLimit } from './rules.ts';

/** Limits shared by every instance, decided in PostgreSQL (GCRA), with each instance's share when it must decide alone. */
export const rateLimitModule = defineModule({
  name: 'ratelimit',
  needs: ['audit', 'settings', 'releases'],
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
  // APP_RATELIMIT_BATCHING=pod: one decision pool in the primary answers every instance's batches.
  primaryWork: ({ config, databaseUrl, registry }) => {
    const { rateLimitBatching, pools, rateLimitSpacingMs, instances, databasePooling } = config as RateLimitConfig;
    return rateLimitBatching === 'pod'
      ? decideForPod(databaseUrl, { connections: pools.rateLimit, spacingMs: rateLimitSpacingMs, instances, pooling: databasePooling, registry })
      : undefined;
  },
  create(context: RateLimitContext) {
    const reader: SettingsReader<(typeof maintenanceSettings)[number]> = context.use(settingsModule).reader;
    const { decide, timeoutMs } = context.rateLimits;
    const limits = context.rateLimits.limits ?? settingsRateLimits(context.use(settingsModule).reader);
    const limiter = createRateLimiter<LimiterName>({
      ...('pod' in decide ? { take: decide.pod, ...POD_BATCHING } : { db: decide.pool, maxInFlight: decide.connections }),
      limits,
      logger: context.logger,
      registry: context.registry,
      decisionTimeoutMs: timeoutMs,
      // Until every running instance has counted this one, deciding alone grants nothing (ADR 0020, amended 2026-11-26).
      liveInstances: context.use(releasesModule).shareDivisor,
    });
    // The pod's primary warms the pod's connections itself.
    if ('pool' in decide) {
      void limiter.warm();
    }
    // The keys the operator's lookup covers are auth's (its sign-in limits): auth names them once created.
    let keysOf: CoveredKeys = () => Promise.reject(new Error('no module named the keys its limits cover'));
    const ops = {
      pool: context.pool,
      listener: context.listener,
      recordAudit: context.use(auditModule).recordAudit,
      keysOf: (subject: RateLimitSubject, db: Queryable) => keysOf(subject, db),
    };
    const refuseFromMemory = refuseKnownFloods(limiter);
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
        refuseFromMemory,
        /** The keys an email and/or address fall under, as the limits' users compute them (ADR 0128). */
        coverKeys(keys: CoveredKeys) {
          keysOf = keys;
        },
      },
      routeDeps: createRateLimitOps(ops, limiter, limits, context.logger),
      readiness: [readinessCheck],
      middleware: {
        // A flood's refusals, known from memory, are answered before Koa; maintenance answers first.
        early: (request) => (reader.boolean('maintenance.enabled') ? undefined : refuseFromMemory(request)),
      },
    };
  },
});
