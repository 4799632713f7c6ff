import client from 'prom-client';
import type { Registry } from '../../platform/metrics/registry.ts';
import { labelSets, zeroCounter } from '../../platform/metrics/zero.ts';
import type { DecisionSource } from './rules.ts';

const FALLBACK_REASONS = ['timeout', 'error'] as const;
const DECISION_SOURCES: readonly DecisionSource[] = ['database', 'memory', 'fallback'];
export type FallbackReason = (typeof FALLBACK_REASONS)[number];

export interface RateLimitMetrics {
  decided(limiter: string, allowed: boolean, source: DecisionSource): void;
  fellBack(limiter: string, reason: FallbackReason): void;
  /** This instance began deciding alone at `since`, or (undefined) the database decides again. */
  alone(since: Date | undefined): void;
}

/** Decision and fallback counters; label values come only from code (limiter names), each known set at 0 from the start. */
export function createRateLimitMetrics(
  registry: Registry | undefined,
  liveInstances: () => number | undefined = () => undefined,
  limiters: readonly string[] = [],
): RateLimitMetrics {
  if (!registry) {
    return { decided: () => undefined, fellBack: () => undefined, alone: () => undefined };
  }
  // Decisions are tallied in plain numbers and handed to the counter when it is collected: prom-client
  // resolves and validates labels on every inc, which cost a refused request more than its decision.
  const tallies = new Map<string, { labels: Record<string, string>; count: number }>();
  const decisions = new client.Counter({
    name: 'backplane_ratelimit_decisions_total',
    help: 'Rate-limit decisions by limiter, outcome and where they were made (database, memory, fallback)',
    labelNames: ['limiter', 'allowed', 'source'],
    registers: [registry],
    collect() {
      for (const tally of tallies.values()) {
        if (tally.count > 0) {
          this.inc(tally.labels, tally.count);
          tally.count = 0;
        }
      }
    },
  });
  zeroCounter(decisions, labelSets({ limiter: limiters, allowed: ['true', 'false'], source: DECISION_SOURCES }));
  const fallbacks = new client.Counter({
    name: 'backplane_ratelimit_fallbacks_total',
    help: 'Decisions made by the local fallback because the database failed or was too slow',
    labelNames: ['limiter', 'reason'],
    registers: [registry],
  });
  zeroCounter(fallbacks, labelSets({ limiter: limiters, reason: FALLBACK_REASONS }));
  const aloneSince = new client.Gauge({
    name: 'backplane_ratelimit_alone_since_seconds',
    help: 'Unix time since which this instance decides rate limits alone, granting its share of each limit; 0 while the database decides',
    registers: [registry],
  });
  aloneSince.set(0);
  new client.Gauge({
    name: 'backplane_ratelimit_live_instances',
    help: 'Running instances across the cluster, as last read with the heartbeat: deciding alone, each grants floor(limit / this); 0 until every running instance has counted this one (then it grants nothing)',
    registers: [registry],
    collect() {
      this.set(liveInstances() ?? 0);
    },
  });
  return {
    alone: (since) => aloneSince.set(since ? since.getTime() / 1000 : 0),
    decided: (limiter, allowed, source) => {
      const id = `${limiter}|${allowed}|${source}`;
      const tally = tallies.get(id);
      if (tally) {
        tally.count += 1;
      } else {
        tallies.set(id, { labels: { limiter, allowed: String(allowed), source }, count: 1 });
      }
    },
    fellBack: (limiter, reason) => fallbacks.inc({ limiter, reason }),
  };
}

/**
 * Keys per statement: how well concurrent decisions are coalesced (the database's cost is per
 * statement). Registered by whoever sends the statements: an instance on its own pool, or the pod's
 * primary deciding for its instances; returns the function that records one statement.
 */
export function createStatementMetrics(registry: Registry | undefined): (limiter: string, keys: number) => void {
  if (!registry) {
    return () => undefined;
  }
  const statementKeys = new client.Histogram({
    name: 'backplane_ratelimit_statement_keys',
    help: 'Keys decided by one rate-limit statement, by limiter',
    labelNames: ['limiter'],
    buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512],
    registers: [registry],
  });
  return (limiter, keys) => statementKeys.observe({ limiter }, keys);
}
