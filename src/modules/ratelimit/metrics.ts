import client from 'prom-client';
import type { Registry } from '../../platform/metrics/registry.ts';
import type { DecisionSource } from './rules.ts';

export type FallbackReason = 'timeout' | 'error';

export interface RateLimitMetrics {
  decided(limiter: string, allowed: boolean, source: DecisionSource): void;
  fellBack(limiter: string, reason: FallbackReason): void;
  /** One statement sent to the database deciding `keys` keys. */
  sent(limiter: string, keys: number): void;
}

/** Decision and fallback counters; label values come only from code (limiter names). */
export function createRateLimitMetrics(registry: Registry | undefined): RateLimitMetrics {
  if (!registry) {
    return { decided: () => undefined, fellBack: () => undefined, sent: () => undefined };
  }
  const decisions = new client.Counter({
    name: 'backplane_ratelimit_decisions_total',
    help: 'Rate-limit decisions by limiter, outcome and where they were made (database, memory, fallback)',
    labelNames: ['limiter', 'allowed', 'source'],
    registers: [registry],
  });
  const fallbacks = new client.Counter({
    name: 'backplane_ratelimit_fallbacks_total',
    help: 'Decisions made by the local fallback because the database failed or was too slow',
    labelNames: ['limiter', 'reason'],
    registers: [registry],
  });
  // Keys per statement: how well concurrent decisions are coalesced (the database's cost is per statement).
  const statementKeys = new client.Histogram({
    name: 'backplane_ratelimit_statement_keys',
    help: 'Keys decided by one rate-limit statement, by limiter',
    labelNames: ['limiter'],
    buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512],
    registers: [registry],
  });
  // Bound children are cached: a decision is on the hot path of every limited request.
  const children = new Map<string, client.Counter.Internal>();
  const child = (counter: client.Counter, labels: Record<string, string>) => {
    const id = `${counter === decisions ? 'd' : 'f'}|${Object.values(labels).join('|')}`;
    let found = children.get(id);
    if (!found) {
      found = counter.labels(labels);
      children.set(id, found);
    }
    return found;
  };
  return {
    decided: (limiter, allowed, source) => child(decisions, { limiter, allowed: String(allowed), source }).inc(),
    fellBack: (limiter, reason) => child(fallbacks, { limiter, reason }).inc(),
    sent: (limiter, keys) => statementKeys.observe({ limiter }, keys),
  };
}
