import { type IntervalHistogram, monitorEventLoopDelay } from 'node:perf_hooks';

/** An instance's latest readings, written with its heartbeat (the response schema is in schemas.ts). */
export interface RuntimeSnapshot {
  version: string;
  heap_in_use_bytes: number;
  event_loop_delay_p99_ms: number;
  pool_in_use: number;
  pool_waiting: number;
  uptime_seconds: number;
  taken_at: string;
}

/** The pool figures pg.Pool exposes; any other Queryable reports zeros. */
interface PoolCounts {
  totalCount?: number;
  idleCount?: number;
  waitingCount?: number;
}

export interface RuntimeSnapshots {
  /** The readings now; the event-loop delay covers the time since the previous take. */
  take(): RuntimeSnapshot;
  stop(): void;
}

const RESOLUTION_MS = 20;

/** Readings for the heartbeat, on a histogram of its own so /ops/system's readings are not reset by it. */
export function createRuntimeSnapshots(version: string, pool: object): RuntimeSnapshots {
  const delay: IntervalHistogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  delay.enable();
  const counts = pool as PoolCounts;
  return {
    take() {
      // The sampler's own timer period is part of each reading; what is left is the delay.
      const p99 = Math.round(Math.max(0, delay.percentile(99) / 1e6 - RESOLUTION_MS) * 1000) / 1000;
      delay.reset();
      const total = counts.totalCount ?? 0;
      return {
        version,
        heap_in_use_bytes: process.memoryUsage().heapUsed,
        event_loop_delay_p99_ms: Number.isFinite(p99) ? p99 : 0,
        pool_in_use: Math.max(0, total - (counts.idleCount ?? 0)),
        pool_waiting: counts.waitingCount ?? 0,
        uptime_seconds: Math.floor(process.uptime()),
        taken_at: new Date().toISOString(),
      };
    },
    stop: () => delay.disable(),
  };
}
