import type { LocalBuckets } from './localBuckets.ts';
import type { FallbackReason } from './metrics.ts';
import { type Decision, type GcraRule, describeDecision, shareRule } from './rules.ts';

const MAX_OWED_KEYS = 100_000;

export interface AloneOptions {
  /** Asks the database once (bounded); resolves when it answered. */
  probe(): Promise<unknown>;
  /** How often the probe asks while alone. */
  retryMs: number;
  began(since: Date): void;
  ended(since: Date): void;
}

/**
 * Whether this instance decides alone, since when and why: begun by a failure of the database (an
 * error, or a decision past its bound), ended by any answer, a probe's or a late statement's. While
 * alone a probe asks every `retryMs`, so no request waits for the bound again.
 */
export class AloneMode {
  private current: { since: Date; sinceUs: number; reason: FallbackReason; error?: unknown; probe?: NodeJS.Timeout } | undefined;
  private readonly options: AloneOptions;

  constructor(options: AloneOptions) {
    this.options = options;
  }

  get since(): Date | undefined {
    return this.current?.since;
  }

  /** When this episode began, in the monotonic microseconds of the local buckets. */
  get sinceUs(): number | undefined {
    return this.current?.sinceUs;
  }

  get reason(): FallbackReason {
    return this.current?.reason ?? 'error';
  }

  get error(): unknown {
    return this.current?.error;
  }

  failed(reason: FallbackReason, error?: unknown): void {
    if (this.current) {
      this.current.reason = reason;
      this.current.error = error ?? this.current.error;
      return;
    }
    this.current = { since: new Date(), sinceUs: performance.now() * 1000, reason, error };
    this.scheduleProbe();
    this.options.began(this.current.since);
  }

  answered(): void {
    if (!this.current) {
      return;
    }
    const { since, probe } = this.current;
    clearTimeout(probe);
    this.current = undefined;
    this.options.ended(since);
  }

  private scheduleProbe(): void {
    const episode = this.current!;
    episode.probe = setTimeout(() => {
      this.options.probe().then(
        () => this.answered(),
        (error: unknown) => {
          // A probe outliving its episode leaves the next one to its own probe.
          if (this.current === episode) {
            episode.error = error;
            this.scheduleProbe();
          }
        },
      );
    }, this.options.retryMs).unref();
  }
}

/**
 * One take decided alone: it costs `live` emission intervals of the full rule in the bucket that
 * follows the database's TAT, so each instance grants floor(remaining / live) and refills at 1/live
 * of the rate, and the instances together stay within the limit (ADR 0020). A share of zero, or an
 * unknown count, refuses until the database answers. A grant is remembered in `owed`, to be
 * written to the database when it answers.
 */
export function decideAlone(
  local: LocalBuckets,
  owed: Map<string, number>,
  rule: GcraRule,
  live: number | undefined,
  id: string,
  retryMs: number,
  aloneSinceUs: number | undefined,
): Decision {
  const share = shareRule(rule, live);
  if (share.burst === 0) {
    return { allowed: false, limit: rule.limit, remaining: 0, retryAfterMs: retryMs, nextUnitMs: retryMs, source: 'fallback', undecided: true };
  }
  const outcome = local.take(id, share, performance.now() * 1000, aloneSinceUs);
  if (outcome.allowed && (owed.size < MAX_OWED_KEYS || owed.has(id))) {
    owed.set(id, (owed.get(id) ?? 0) + 1);
  }
  return describeDecision(share, outcome.allowed, outcome.usedUs, 'fallback');
}
