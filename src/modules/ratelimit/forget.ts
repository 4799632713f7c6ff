import type { KnownBlocks } from './knownBlocks.ts';
import type { LocalBuckets } from './localBuckets.ts';

/** The memory one limiter holds per key on this instance. */
export interface KeyMemory {
  blocks: KnownBlocks;
  local: LocalBuckets;
  owed: Map<string, number>;
}

/**
 * Forgets every key `matches` picks (an operator cleared its bucket): its known block, its local
 * bucket and what it owes the database. Returns how many keys were forgotten.
 */
export function forgetKeys(memory: KeyMemory, matches: (id: string) => boolean): number {
  const ids = new Set([...memory.blocks.ids(), ...memory.local.ids(), ...memory.owed.keys()]);
  let forgotten = 0;
  for (const id of ids) {
    if (matches(id)) {
      memory.blocks.delete(id);
      memory.local.forget(id);
      memory.owed.delete(id);
      forgotten += 1;
    }
  }
  return forgotten;
}
