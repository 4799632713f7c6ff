import type client from 'prom-client';

/**
 * Gives a counter a 0 sample for every label set known at start, so `increase()` sees the first
 * event (a series born at 1 loses it).
 */
export function zeroCounter<T extends string>(counter: client.Counter<T>, labelSets: Iterable<Partial<Record<T, string>>>): void {
  for (const labels of labelSets) {
    counter.inc(labels, 0);
  }
}

/** Every combination of the given label values: `{a: ['1','2'], b: ['x']}` → `[{a:'1',b:'x'}, {a:'2',b:'x'}]`. */
export function labelSets<T extends string>(values: Record<T, readonly string[]>): Record<T, string>[] {
  let sets: Record<string, string>[] = [{}];
  for (const [name, options] of Object.entries(values) as [string, readonly string[]][]) {
    sets = sets.flatMap((set) => options.map((option) => ({ ...set, [name]: option })));
  }
  return sets as Record<T, string>[];
}
