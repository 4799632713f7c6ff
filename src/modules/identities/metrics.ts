import client from 'prom-client';
import type { Queryable } from '../../platform/db/pool.ts';
import { labelSets, zeroCounter } from '../../platform/metrics/zero.ts';
import { withTimeout } from '../../platform/time.ts';
import { selectBacklog } from './store/revocations.ts';

const REVOCATION_OUTCOMES = ['revoked', 'retrying', 'abandoned'] as const;
export type RevocationOutcome = (typeof REVOCATION_OUTCOMES)[number];

export interface RevocationMetrics {
  outcome(provider: string, outcome: RevocationOutcome, count: number): void;
}

/**
 * Outcomes this instance recorded, and the queue as the database holds it (read at each scrape,
 * so every instance reports the same figures: take one, not the sum).
 */
export function createRevocationMetrics(registry: client.Registry, db: Queryable, providers: readonly string[] = []): RevocationMetrics {
  const outcomes = new client.Counter({
    name: 'backplane_token_revocations_total',
    help: "Revocation attempts of providers' tokens this instance made, by provider and outcome",
    labelNames: ['provider', 'outcome'],
    registers: [registry],
  });
  // Every configured provider starts at 0, so the first abandoned token raises the alert.
  zeroCounter(outcomes, labelSets({ provider: providers, outcome: REVOCATION_OUTCOMES }));
  let last = { depth: 0, oldestDueSeconds: 0 };
  let reading: Promise<void> | undefined;
  // Both gauges are collected side by side during a scrape: they share one read.
  const refresh = () =>
    (reading ??= read().finally(() => {
      reading = undefined;
    }));
  const read = async () => {
    try {
      const backlog = await withTimeout(selectBacklog(db), 1_000);
      last = {
        depth: backlog.depth,
        oldestDueSeconds: backlog.oldestDueAt ? Math.max(0, (backlog.dbNow.getTime() - backlog.oldestDueAt.getTime()) / 1000) : 0,
      };
    } catch {
      // An unreachable database keeps the last figures; readiness reports the outage.
    }
  };
  new client.Gauge({
    name: 'backplane_token_revocation_queue_depth',
    help: "Providers' tokens waiting in auth_token_revocations, due or not",
    registers: [registry],
    async collect() {
      await refresh();
      this.set(last.depth);
    },
  });
  new client.Gauge({
    name: 'backplane_token_revocation_oldest_due_seconds',
    help: 'How long the oldest due revocation has waited past its due time (0 when none is due)',
    registers: [registry],
    async collect() {
      await refresh();
      this.set(last.oldestDueSeconds);
    },
  });
  return {
    outcome(provider, outcome, count) {
      if (count > 0) {
        outcomes.inc({ provider, outcome }, count);
      }
    },
  };
}
