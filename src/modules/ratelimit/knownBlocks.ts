/**
 * Keys this instance knows to be out of quota until a moment (monotonic ms), learnt from the
 * database's answers: until then refusals are answered from memory without a round trip. The
 * shared TAT only grows, so such a refusal is never wrong while the limit stays the same.
 */
export class KnownBlocks {
  private readonly until = new Map<string, number>();
  private lastSweep = 0;

  private readonly maxKeys: number;

  constructor(maxKeys = 100_000) {
    this.maxKeys = maxKeys;
  }

  blockedUntil(id: string, now: number): number | undefined {
    const until = this.until.get(id);
    if (until === undefined) {
      return undefined;
    }
    if (until <= now) {
      this.until.delete(id);
      return undefined;
    }
    return until;
  }

  add(id: string, until: number, now: number): void {
    if (this.until.size >= this.maxKeys && !this.until.has(id)) {
      this.sweep(now);
      if (this.until.size >= this.maxKeys) {
        return;
      }
    }
    this.until.set(id, until);
  }

  clear(): void {
    this.until.clear();
  }

  ids(): IterableIterator<string> {
    return this.until.keys();
  }

  delete(id: string): void {
    this.until.delete(id);
  }

  private sweep(now: number): void {
    if (now - this.lastSweep < 1_000) {
      return;
    }
    this.lastSweep = now;
    for (const [id, until] of this.until) {
      if (until <= now) {
        this.until.delete(id);
      }
    }
  }
}
