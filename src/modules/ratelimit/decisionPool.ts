import type { Worker } from 'node:cluster';
import type client from 'prom-client';
import { type InstrumentedPool, createPool } from '../../platform/db/pool.ts';
import { DEFAULT_DECISION_TIMEOUT_MS } from './limiter.ts';
import { createStatementMetrics } from './metrics.ts';
import { createPodDecisions, isPodTake } from './podDecisions.ts';

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
