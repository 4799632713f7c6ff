import type { Span, SpanContext } from '@opentelemetry/api';
import type { Logger } from 'pino';
import type { Registry } from '../../platform/metrics/registry.ts';
import { withTimeout } from '../../platform/time.ts';
import { AloneMode, decideAlone } from './alone.ts';
import { type Deadlined, DeadlineQueue } from './deadlines.ts';
import { endDecisionSpan, startDecisionSpan } from './decisionSpans.ts';
import { bucketDigest } from './digest.ts';
import { forgetKeys } from './forget.ts';
import { mayStartStatement, scheduledFlushes } from './flushes.ts';
import { KnownBlocks } from './knownBlocks.ts';
import { LocalBuckets } from './localBuckets.ts';
import { type FallbackReason, createRateLimitMetrics, createStatementMetrics } from './metrics.ts';
import { type Decision, type GcraRule, type LimitSource, type RateLimit, describeDecision, gcraRule, sameLimit } from './rules.ts';
import { type BucketOutcome, type StatementRunner, type TakeBuckets, poolBuckets } from './store.ts';

export interface RateLimiterOptions<N extends string> {
  /** A pool reserved for decisions; its size is the number of statements in flight. */
  db?: StatementRunner;
  /** Instead of `db`: where batches are decided, such as the pod's primary (podDecisions.ts). */
  take?: TakeBuckets;
  /** Each limiter's limit, read on every decision. */
  limits: Record<N, LimitSource>;
  logger: Logger;
  registry?: Registry;
  /**
   * The one bound on a decision, from the take to the answer: waiting for a batch, for a
   * connection and for the statement. Past it, this instance decides alone.
   */
  decisionTimeoutMs?: number;
  /**
   * Running instances across the cluster (every host), as last read; undefined until every running
   * instance has counted this one. Deciding alone, an instance grants floor(limit / this) and refuses while it is unknown.
   */
  liveInstances?: () => number | undefined;
  /** Statements in flight at once; keep it at the pool's size. */
  maxInFlight?: number;
  /** Keys decided by one statement at most. */
  maxBatchKeys?: number;
  /** Waiting keys that justify a statement beside one already in flight. */
  parallelBatchKeys?: number;
  /** While deciding alone, the database is asked again (by one probe, never a request) this often. */
  retryDatabaseAfterMs?: number;
  /**
   * After a statement that decided several keys, the next one waits this long for more takes, so
   * the clients it just answered join it rather than the one after (0 sends at once).
   */
  batchWindowMs?: number;
}

export interface RateLimiter<N extends string = string> {
  /**
   * Spends one request of `key`'s budget in `limiter`; never rejects because the store failed.
   * `by` (performance.now()) is the request's deadline: the wait ends there if before the
   * limiter's own bound, undecided (ADR 0070, amended 2026-11-26).
   */
  take(limiter: N, key: string, by?: number): Promise<Decision>;
  /** A refusal known from memory, without spending anything; undefined when only a take can tell. */
  refusedFromMemory(limiter: N, key: string): Decision | undefined;
  /** Opens and prepares every connection now, so the first decisions do not pay for it. */
  warm(): Promise<void>;
  /** When this instance began deciding alone (the database failed or passed the bound); undefined while the database decides. */
  aloneSince(): Date | undefined;
  /** Forgets what this instance holds of the keys with these digests (an operator cleared them); returns how many it held. */
  forget(limiter: N, digests: Buffer[]): number;
}

interface Waiter extends Deadlined {
  resolve(decision: Decision): void;
  state: LimiterState;
  id: string;
  /** The deadline is the request's, not the limiter's bound: passing it says nothing of the database. */
  requestEnds: boolean;
  /** The request's `ratelimit decide` span, only when the request is traced and sampled. */
  span: Span | undefined;
}

interface PendingKey {
  /** The key as the caller named it; this limiter's maps use it. */
  id: string;
  /** Its SHA-256 (with the limiter's name): what the database stores. */
  key: Buffer;
  /** Hits this instance granted alone, written back ahead of the waiters so the database counts them. */
  owed: number;
  waiters: Waiter[];
}

interface LimiterState {
  name: string;
  source: LimitSource;
  limit: RateLimit;
  rule: GcraRule;
  blocks: KnownBlocks;
  local: LocalBuckets;
  pending: Map<string, PendingKey>;
  /** Per key, hits granted while deciding alone, not yet written to the database. */
  owed: Map<string, number>;
  digests: Map<string, Buffer>;
  lastWarnedAt: number;
}

const WARN_EVERY_MS = 60_000;
// A statement of no keys: what warming a connection and probing the database send.
const PROBE_RULE = gcraRule({ limit: 1, periodSeconds: 1 });
const MAX_REMEMBERED_DIGESTS = 32_768;

/**
 * The default bound on one decision: a busy 2-core CI machine was seen to take more than 1 s to
 * hand out a connection, and a request held 2 s still has most of a 5 s whole-request deadline
 * left (ADR 0020, "One bound, and deciding alone").
 */
export const DEFAULT_DECISION_TIMEOUT_MS = 2_000;

/**
 * Shared GCRA limits decided in PostgreSQL. Concurrent takes are coalesced per limiter into one
 * statement (all hits of one key in one row update); a statement leaves at once when none is in
 * flight, so batches grow with load and an idle decision is one round trip. Keys known to be
 * blocked are refused from memory, which sheds floods without touching the database.
 */
export function createRateLimiter<N extends string>(options: RateLimiterOptions<N>): RateLimiter<N> {
  const timeoutMs = options.decisionTimeoutMs ?? DEFAULT_DECISION_TIMEOUT_MS;
  const liveInstances = options.liveInstances ?? (() => undefined);
  const maxInFlight = options.maxInFlight ?? 4;
  const maxBatchKeys = options.maxBatchKeys ?? 1_000;
  const parallelBatchKeys = options.parallelBatchKeys ?? 32;
  const retryDatabaseAfterMs = options.retryDatabaseAfterMs ?? 1_000;
  const batchWindowMs = options.batchWindowMs ?? 4;
  const metrics = createRateLimitMetrics(options.registry, liveInstances, Object.keys(options.limits));
  if (!options.take && !options.db) {
    throw new Error('a rate limiter needs a pool or a decider');
  }
  // Whoever runs the statements counts their keys: this instance on its own pool, or the pod's primary.
  const take = options.take ?? poolBuckets(options.db!, createStatementMetrics(options.registry));
  const states = new Map<string, LimiterState>();
  for (const name of Object.keys(options.limits) as N[]) {
    const limit = options.limits[name]();
    states.set(name, {
      name,
      source: options.limits[name],
      limit,
      rule: gcraRule(limit),
      blocks: new KnownBlocks(),
      local: new LocalBuckets(),
      pending: new Map(),
      owed: new Map(),
      digests: new Map(),
      lastWarnedAt: -Infinity,
    });
  }
  let inFlight = 0;

  const currentRule = (state: LimiterState): GcraRule => {
    const limit = state.source();
    if (!sameLimit(limit, state.limit)) {
      state.limit = limit;
      state.rule = gcraRule(limit);
      // Blocks learnt under the old limit may be wrong under the new one.
      state.blocks.clear();
    }
    return state.rule;
  };

  // Clients repeat themselves: a key's digest is remembered rather than computed per request.
  const digestOf = (state: LimiterState, key: string): Buffer => {
    let digest = state.digests.get(key);
    if (!digest) {
      digest = bucketDigest(state.name, key);
      if (state.digests.size >= MAX_REMEMBERED_DIGESTS) {
        state.digests.clear();
      }
      state.digests.set(key, digest);
    }
    return digest;
  };

  const counted = (state: LimiterState, decision: Decision): Decision => {
    metrics.decided(state.name, decision.allowed, decision.source);
    return decision;
  };

  const fromMemory = (state: LimiterState, waitMs: number): Decision =>
    counted(state, { allowed: false, limit: state.rule.limit, remaining: 0, retryAfterMs: waitMs, nextUnitMs: waitMs, source: 'memory' });

  const fromFallback = (state: LimiterState, id: string, reason: FallbackReason): Decision => {
    metrics.fellBack(state.name, reason);
    const now = performance.now();
    const live = liveInstances();
    if (now - state.lastWarnedAt >= WARN_EVERY_MS) {
      state.lastWarnedAt = now;
      options.logger.warn(
        { limiter: state.name, reason, live_instances: live ?? null, err: alone.error },
        'rate limits are decided by this instance alone, with its share of each limit, until the database answers again',
      );
    }
    return counted(state, decideAlone(state.local, state.owed, state.rule, live, id, retryDatabaseAfterMs, alone.sinceUs));
  };

  const alone = new AloneMode({
    probe: () => withTimeout(take('probe', PROBE_RULE, [], []), timeoutMs),
    retryMs: retryDatabaseAfterMs,
    began: (since) => metrics.alone(since),
    ended: (since) => {
      options.logger.info({ since: since.toISOString() }, 'rate limits are decided in the database again');
      metrics.alone(undefined);
      // What was granted alone is spent in the shared bucket too, or the database would grant it again.
      for (const state of states.values()) {
        for (const [id, hits] of state.owed) {
          pendingKey(state, id).owed += hits;
        }
        state.owed.clear();
      }
      scheduleFlush();
    },
  });

  const pendingKey = (state: LimiterState, id: string): PendingKey => {
    let entry = state.pending.get(id);
    if (!entry) {
      entry = { id, key: digestOf(state, id), owed: 0, waiters: [] };
      state.pending.set(id, entry);
    }
    return entry;
  };

  const settle = (waiter: Waiter, decision: Decision) => {
    waiter.settled = true;
    if (waiter.span) {
      endDecisionSpan(waiter.span, decision);
    }
    waiter.resolve(decision);
  };

  // Out of the request's time: refused as undecided (a 503), no grant alone, no verdict on the database.
  const outOfTime = (state: LimiterState): Decision =>
    counted(state, {
      allowed: false,
      limit: state.rule.limit,
      remaining: 0,
      retryAfterMs: retryDatabaseAfterMs,
      nextUnitMs: retryDatabaseAfterMs,
      source: 'fallback',
      undecided: true,
    });

  const deadlines = new DeadlineQueue<Waiter>((waiter) => {
    if (waiter.requestEnds) {
      settle(waiter, outOfTime(waiter.state));
      return;
    }
    alone.failed('timeout');
    settle(waiter, fromFallback(waiter.state, waiter.id, 'timeout'));
  });

  const settleBatch = (state: LimiterState, rule: GcraRule, batch: PendingKey[], outcomes: BucketOutcome[], sentAt: number) => {
    batch.forEach((entry, index) => {
      const { admitted, usedUs, before } = outcomes[index]!;
      entry.waiters.forEach((waiter, order) => {
        if (waiter.settled) {
          return;
        }
        const position = before + entry.owed + order;
        const allowed = position < admitted;
        // The k-th admitted hit of a key left the bucket (admitted - k) intervals emptier than the last.
        const used = allowed ? usedUs - (admitted - 1 - position) * rule.intervalUs : usedUs;
        settle(waiter, counted(state, describeDecision(rule, allowed, used, 'database')));
      });
      const now = performance.now();
      // Measured from the answer, not the send: deciding alone must never find more room than the database had.
      state.local.follow(entry.id, now * 1000 + usedUs, now * 1000);
      if (rule !== state.rule || rule.toleranceUs - usedUs >= rule.intervalUs) {
        return;
      }
      const until = sentAt + (usedUs + rule.intervalUs - rule.toleranceUs) / 1000;
      state.blocks.add(entry.id, until, now);
      const queued = state.pending.get(entry.id);
      if (queued && until > now) {
        state.pending.delete(entry.id);
        queued.waiters.filter((waiter) => !waiter.settled).forEach((waiter) => settle(waiter, fromMemory(state, until - now)));
      }
    });
  };

  const send = (state: LimiterState) => {
    const batch: PendingKey[] = [];
    let waiting: SpanContext[] | undefined;
    for (const entry of state.pending.values()) {
      state.pending.delete(entry.id);
      // Hits already answered by the fallback are not spent twice.
      entry.waiters = entry.waiters.filter((waiter) => !waiter.settled);
      if (entry.waiters.length > 0 || entry.owed > 0) {
        batch.push(entry);
        for (const waiter of entry.waiters) {
          if (waiter.span) {
            (waiting ??= []).push(waiter.span.spanContext());
          }
        }
      }
      if (batch.length >= maxBatchKeys) {
        break;
      }
    }
    if (batch.length === 0) {
      return;
    }
    batch.sort((a, b) => Buffer.compare(a.key, b.key));
    const rule = state.rule;
    const sentAt = performance.now();
    inFlight += 1;
    const keys = batch.map((entry) => entry.key);
    const hits = batch.map((entry) => entry.owed + entry.waiters.length);
    take(state.name, rule, keys, hits, waiting)
      .then(
        (outcomes) => {
          alone.answered();
          settleBatch(state, rule, batch, outcomes, sentAt);
        },
        (error: unknown) => {
          alone.failed('error', error);
          for (const entry of batch) {
            if (entry.owed > 0) {
              state.owed.set(entry.id, (state.owed.get(entry.id) ?? 0) + entry.owed);
            }
            entry.waiters.filter((waiter) => !waiter.settled).forEach((waiter) => settle(waiter, fromFallback(state, entry.id, 'error')));
          }
        },
      )
      .finally(() => {
        inFlight -= 1;
        scheduleFlush(batch.length > 1 ? batchWindowMs : 0);
      });
  };

  const scheduleFlush = scheduledFlushes(() => {
    for (const state of states.values()) {
      while (mayStartStatement(state.pending.size, inFlight, maxInFlight, parallelBatchKeys)) {
        send(state);
      }
    }
  });

  const stateOf = (name: N): LimiterState => {
    const state = states.get(name);
    if (!state) {
      throw new Error(`unknown rate limiter ${name}`);
    }
    return state;
  };

  const refuse = (state: LimiterState, key: string): Decision | undefined => {
    currentRule(state);
    const now = performance.now();
    const blockedUntil = state.blocks.blockedUntil(key, now);
    return blockedUntil === undefined ? undefined : fromMemory(state, blockedUntil - now);
  };

  return {
    aloneSince: () => alone.since,
    forget(name, digests) {
      const state = stateOf(name);
      const wanted = new Set(digests.map((digest) => digest.toString('hex')));
      return forgetKeys(state, (id) => wanted.has(digestOf(state, id).toString('hex')));
    },
    async warm() {
      await Promise.all(Array.from({ length: maxInFlight }, () => take('probe', PROBE_RULE, [], []).catch(() => undefined)));
    },
    refusedFromMemory(name, key) {
      return refuse(stateOf(name), key);
    },
    take(name, key, by = Infinity) {
      const state = stateOf(name);
      const refused = refuse(state, key);
      if (refused) {
        return Promise.resolve(refused);
      }
      if (alone.since) {
        return Promise.resolve(fromFallback(state, key, alone.reason));
      }
      const now = performance.now();
      if (by <= now) {
        return Promise.resolve(outOfTime(state));
      }
      return new Promise<Decision>((resolve) => {
        const bound = now + timeoutMs;
        const waiter: Waiter = {
          resolve,
          settled: false,
          deadline: Math.min(bound, by),
          state,
          id: key,
          requestEnds: by < bound,
          span: startDecisionSpan(name),
        };
        deadlines.add(waiter);
        pendingKey(state, key).waiters.push(waiter);
        scheduleFlush();
      });
    },
  };
}
