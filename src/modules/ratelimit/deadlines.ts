export interface Deadlined {
  settled: boolean;
  /** performance.now() by which the item must be settled. */
  deadline: number;
}

/**
 * Items in arrival order with one timer, for the oldest: every item shares one bound, so
 * deadlines arrive in order, and a bound per decision needs no timer per request.
 */
export class DeadlineQueue<T extends Deadlined> {
  private items: T[] = [];
  private head = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly onExpired: (item: T) => void;

  constructor(onExpired: (item: T) => void) {
    this.onExpired = onExpired;
  }

  add(item: T): void {
    this.items.push(item);
    if (!this.timer) {
      this.arm();
    }
  }

  private arm(): void {
    while (this.head < this.items.length && this.items[this.head]!.settled) {
      this.head += 1;
    }
    if (this.head >= this.items.length) {
      this.items = [];
      this.head = 0;
      return;
    }
    if (this.head > 1_024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    const wait = Math.max(0, this.items[this.head]!.deadline - performance.now());
    this.timer = setTimeout(() => this.expire(), wait);
  }

  private expire(): void {
    this.timer = undefined;
    const now = performance.now();
    while (this.head < this.items.length && (this.items[this.head]!.settled || this.items[this.head]!.deadline <= now)) {
      const item = this.items[this.head]!;
      this.head += 1;
      if (!item.settled) {
        this.onExpired(item);
      }
    }
    this.arm();
  }
}
