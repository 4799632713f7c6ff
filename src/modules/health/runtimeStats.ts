import { availableParallelism } from 'node:os';
import { type IntervalHistogram, PerformanceObserver, monitorEventLoopDelay, performance } from 'node:perf_hooks';

export interface RuntimeStats {
  go_version: string;
  gomaxprocs: number;
  goroutines: number;
  heap_in_use_bytes: number;
  gcs: number;
  last_gc_pause_ms: number;
  /** Node's own figures beside the seed's names. */
  event_loop_delay_p99_ms: number;
  event_loop_utilization: number;
  rss_bytes: number;
}

export interface RuntimeSampler {
  sample(): RuntimeStats;
  /** Garbage collections since start and the last one's pause, for metrics. */
  gc(): { count: number; lastPauseMs: number };
  stop(): void;
}

/**
 * Node meanings for the seed's Go-named fields: go_version is the Node version, gomaxprocs the
 * CPUs this process may use, goroutines the active handles and requests keeping the loop alive.
 */
export function createRuntimeSampler(): RuntimeSampler {
  let gcs = 0;
  let lastGcPauseMs = 0;
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      gcs += 1;
      lastGcPauseMs = entry.duration;
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  const resolutionMs = 20;
  const delay: IntervalHistogram = monitorEventLoopDelay({ resolution: resolutionMs });
  delay.enable();
  let lastUtilization = performance.eventLoopUtilization();

  return {
    sample() {
      const utilization = performance.eventLoopUtilization(lastUtilization);
      lastUtilization = performance.eventLoopUtilization();
      const memory = process.memoryUsage();
      return {
        go_version: process.version,
        gomaxprocs: availableParallelism(),
        goroutines: process.getActiveResourcesInfo().length,
        heap_in_use_bytes: memory.heapUsed,
        gcs: Math.min(gcs, 2_147_483_647),
        last_gc_pause_ms: Math.round(lastGcPauseMs * 1000) / 1000,
        // The sampler's own timer period is part of each reading; what is left is the delay.
        event_loop_delay_p99_ms: Math.round(Math.max(0, delay.percentile(99) / 1e6 - resolutionMs) * 1000) / 1000,
        event_loop_utilization: Math.round(utilization.utilization * 10_000) / 10_000,
        rss_bytes: memory.rss,
      };
    },
    gc: () => ({ count: gcs, lastPauseMs: lastGcPauseMs }),
    stop() {
      observer.disconnect();
      delay.disable();
    },
  };
}
