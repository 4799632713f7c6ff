import type { GcraRule } from './rules.ts';

export interface LocalOutcome {
  allowed: boolean;
  usedUs: number;
}

/**
 * The same GCRA in this process's memory, for when the database does not answer: TATs in
 * monotonic microseconds, at most `maxKeys` buckets, following what the database last said. Buckets that are full again are forgotten
 * when room is needed; when none is, a new key is admitted untracked, so a flood of keys cannot
 * lock everyone out.
 */
export class LocalBuckets {
  private readonly tats = new Map<string, number>();
  /** When the database last reported a key's TAT, until a take alone has accounted for the time since. */
  private readonly reportedAt = new Map<string, number>();
  private lastSweepUs = 0;

  private readonly maxKeys: number;

  constructor(maxKeys = 100_000) {
    this.maxKeys = maxKeys;
  }

  /**
   * `aloneSinceUs`: when this instance began deciding alone. Other instances may have spent what a
   * bucket regained between the database's last report and then, so that regain is not counted.
   */
  take(key: string, rule: GcraRule, nowUs = performance.now() * 1000, aloneSinceUs?: number): LocalOutcome {
    let known = this.tats.get(key);
    const reported = this.reportedAt.get(key);
    if (known !== undefined && reported !== undefined && aloneSinceUs !== undefined) {
      known += Math.max(0, aloneSinceUs - reported);
      this.tats.set(key, known);
      this.reportedAt.delete(key);
    }
    const base = Math.max(known ?? nowUs, nowUs);
    const used = base - nowUs;
    if (used + rule.intervalUs > rule.toleranceUs) {
      return { allowed: false, usedUs: used };
    }
    if (known === undefined && this.tats.size >= this.maxKeys && !this.sweep(nowUs)) {
      return { allowed: true, usedUs: rule.intervalUs };
    }
    this.tats.set(key, base + rule.intervalUs);
    return { allowed: true, usedUs: used + rule.intervalUs };
  }

  /** Follows the shared bucket: a TAT the database reported, so a fallback starts where it left off. */
  follow(key: string, tatUs: number, nowUs = performance.now() * 1000): void {
    const known = this.tats.get(key);
    if (known !== undefined ? tatUs > known : this.tats.size < this.maxKeys || this.sweep(nowUs)) {
      this.tats.set(key, tatUs);
    }
    if (this.tats.has(key)) {
      this.reportedAt.set(key, nowUs);
    }
  }

  ids(): IterableIterator<string> {
    return this.tats.keys();
  }

  /** Drops a key's bucket: the next take starts full. */
  forget(key: string): void {
    this.tats.delete(key);
    this.reportedAt.delete(key);
  }

  get size(): number {
    return this.tats.size;
  }

  /** Forgets full buckets, at most once a second; true when that made room. */
  private sweep(nowUs: number): boolean {
    if (nowUs - this.lastSweepUs >= 1_000_000) {
      this.lastSweepUs = nowUs;
      for (const [key, tat] of this.tats) {
        if (tat <= nowUs) {
          this.tats.delete(key);
          this.reportedAt.delete(key);
        }
      }
    }
    return this.tats.size < this.maxKeys;
  }
}
