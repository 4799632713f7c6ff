export interface Deadlined {
  settled: boolean;
  /** performance.now() by which the item must be settled. */
  deadline: number;
}

/**
 * Items by deadline with one timer, for the earliest: a bound per decision needs no timer per
 * request. A heap, not a queue in arrival order: a decision ends at the limiter's bound or at its
 * request's deadline, whichever comes first, so a later take may have to end sooner.
 */
export class DeadlineQueue<T extends Deadlined> {
  private heap: T[] = [];
  private timer: NodeJS.Timeout | undefined;
  /** The deadline the timer is armed for. */
  private armedFor = Infinity;
  private readonly onExpired: (item: T) => void;

  constructor(onExpired: (item: T) => void) {
    this.onExpired = onExpired;
  }

  add(item: T): void {
    this.push(item);
    if (item.deadline < this.armedFor) {
      this.arm();
    }
  }

  private arm(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.armedFor = Infinity;
    while (this.heap.length > 0 && this.heap[0]!.settled) {
      this.pop();
    }
    const first = this.heap[0];
    if (!first) {
      return;
    }
    this.armedFor = first.deadline;
    this.timer = setTimeout(() => this.expire(), Math.max(0, first.deadline - performance.now()));
  }

  private expire(): void {
    const now = performance.now();
    while (this.heap.length > 0 && (this.heap[0]!.settled || this.heap[0]!.deadline <= now)) {
      const item = this.pop();
      if (!item.settled) {
        this.onExpired(item);
      }
    }
    this.arm();
  }

  private push(item: T): void {
    const heap = this.heap;
    let index = heap.push(item) - 1;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (heap[parent]!.deadline <= item.deadline) {
        break;
      }
      heap[index] = heap[parent]!;
      index = parent;
    }
    heap[index] = item;
  }

  private pop(): T {
    const heap = this.heap;
    const first = heap[0]!;
    const last = heap.pop()!;
    if (heap.length === 0) {
      return first;
    }
    let index = 0;
    for (;;) {
      const left = index * 2 + 1;
      if (left >= heap.length) {
        break;
      }
      const right = left + 1;
      const child = right < heap.length && heap[right]!.deadline < heap[left]!.deadline ? right : left;
      if (heap[child]!.deadline >= last.deadline) {
        break;
      }
      heap[index] = heap[child]!;
      index = child;
    }
    heap[index] = last;
    return first;
  }
}
