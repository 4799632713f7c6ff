import type { BucketRule } from './store.ts';

/** A limit as the settings express it: `limit` requests per `periodSeconds`. */
export interface RateLimit {
  /** Requests admitted per period. */
  limit: number;
  /** The period, in seconds. */
  periodSeconds: number;
}

/** The port a limiter reads its limit from, on every decision (the runtime settings). */
export type LimitSource = () => RateLimit;

/** Where a decision came from: the shared buckets, a block already known here, or the local fallback. */
export type DecisionSource = 'database' | 'memory' | 'fallback';

export interface Decision {
  allowed: boolean;
  /** The limit that decided, for the RateLimit-Policy header. */
  limit: RateLimit;
  /** Requests that would still be admitted right now. */
  remaining: number;
  /** When refused: how long until one more request is admitted. 0 when allowed. */
  retryAfterMs: number;
  /** How long until the remaining quota grows again; 0 when the bucket is full. */
  nextUnitMs: number;
  source: DecisionSource;
  /** Refused because this instance could not decide: alone with no share of the limit (ADR 0020). */
  undecided?: boolean;
}

export interface GcraRule extends BucketRule {
  limit: RateLimit;
  toleranceUs: number;
}

/**
 * GCRA with burst = limit: one request is paid back every periodSeconds/limit (the emission
 * interval, whole microseconds), and a full bucket admits `limit` at once.
 */
export function gcraRule(limit: RateLimit): GcraRule {
  const burst = Math.max(1, Math.floor(limit.limit));
  const periodUs = Math.max(1, Math.round(limit.periodSeconds * 1_000_000));
  const intervalUs = Math.max(1, Math.floor(periodUs / burst));
  return { limit: { limit: burst, periodSeconds: limit.periodSeconds }, burst, intervalUs, toleranceUs: intervalUs * burst };
}

export function sameLimit(a: RateLimit, b: RateLimit): boolean {
  return a.limit === b.limit && a.periodSeconds === b.periodSeconds;
}

/**
 * Describes a bucket whose TAT lies `usedUs` ahead of now after the decision: what remains and
 * when the next unit comes back (for a refusal, that is when to retry).
 */
export function describeDecision(rule: GcraRule, allowed: boolean, usedUs: number, source: DecisionSource): Decision {
  const used = Math.max(0, usedUs);
  const remaining = allowed ? Math.min(rule.burst, Math.max(0, Math.floor((rule.toleranceUs - used) / rule.intervalUs))) : 0;
  const nextUnitUs = remaining >= rule.burst ? 0 : Math.max(1, used + (remaining + 1) * rule.intervalUs - rule.toleranceUs);
  return {
    allowed,
    limit: rule.limit,
    remaining,
    retryAfterMs: allowed ? 0 : nextUnitUs / 1000,
    nextUnitMs: nextUnitUs / 1000,
    source,
  };
}

/**
 * What one of `live` instances deciding alone may grant: each take costs `live` emission intervals
 * of the full bucket, so a full bucket grants floor(limit / live), a partly spent one its remaining
 * / live, and it refills at 1/live of the rate. An unknown count grants nothing (burst 0).
 */
export function shareRule(rule: GcraRule, live: number | undefined): GcraRule {
  if (live === undefined || !(live >= 1)) {
    return { limit: rule.limit, burst: 0, intervalUs: rule.toleranceUs + 1, toleranceUs: rule.toleranceUs };
  }
  const intervalUs = rule.intervalUs * Math.floor(live);
  return { limit: rule.limit, burst: Math.floor(rule.toleranceUs / intervalUs), intervalUs, toleranceUs: rule.toleranceUs };
}
