import { totalmem } from 'node:os';
import { operatorOptions } from './nodeOptions.ts';

/** Share of the container's memory the instances' heaps may take together; the rest is native memory, buffers and the primary. */
const HEAP_SHARE = 0.6;
const MIN_HEAP_MB = 64;

/**
 * The old-space limit (MB) of each instance the primary forks, from the container's memory limit
 * (cgroup memory.max, as process.constrainedMemory() reads it). Node sizes each process's heap
 * from that limit on its own, as if it were alone; a pod runs the primary and several instances,
 * whose heaps together would then outgrow the limit, and the kernel kills one before V8 collects.
 * Undefined, leaving Node's default: no limit, or the operator chose one (--max-old-space-size).
 */
export function instanceHeapLimitMb(options: {
  limitBytes: number | undefined;
  instances: number;
  execArgv: readonly string[];
  nodeOptions: string | undefined;
}): number | undefined {
  const { limitBytes, instances } = options;
  // Unconstrained, Node reports 0 (older) or a huge value (2^64); neither is a limit.
  if (!limitBytes || limitBytes >= totalmem()) {
    return undefined;
  }
  if (operatorOptions(options.execArgv, options.nodeOptions).some((flag) => /^--max[-_]old[-_]space[-_]size(=|$)/.test(flag))) {
    return undefined;
  }
  return Math.max(MIN_HEAP_MB, Math.floor((limitBytes * HEAP_SHARE) / instances / 1024 / 1024));
}
