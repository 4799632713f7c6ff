import type pg from 'pg';
import type { ReadinessCheck } from '../../platform/readiness.ts';

/** A loop late by this much at its last tick answers probes too slowly to take traffic (the probe itself waits 4 s). */
export const EVENT_LOOP_STALL_MS = 2_000;

const TICK_MS = 500;

/**
 * `event_loop`: fails while this instance's loop ran late by more than EVENT_LOOP_STALL_MS at its
 * last tick, or has not ticked for that long (the probe that reads it is then late itself). A
 * dependency's outage never stalls the loop: waits on it are asynchronous.
 */
export function eventLoopCheck(): ReadinessCheck & { stop(): void } {
  let lastTick = performance.now();
  let lastLateMs = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    lastLateMs = Math.max(0, now - lastTick - TICK_MS);
    lastTick = now;
  }, TICK_MS);
  timer.unref();
  return {
    name: 'event_loop',
    failure: `the event loop was stalled for more than ${EVENT_LOOP_STALL_MS} ms`,
    run: async () => {
      if (lastLateMs > EVENT_LOOP_STALL_MS || performance.now() - lastTick > TICK_MS + EVENT_LOOP_STALL_MS) {
        throw new Error('event loop stalled');
      }
    },
    stop: () => clearInterval(timer),
  };
}

/**
 * `pool`: fails once this instance's pool is closed (it is draining or shutting down). It reads
 * the pool's state only: waiting for a connection is what every pod does while the shared
 * database stalls, so it is the `database` check's to report, not a reason to leave the Service.
 */
export function poolCheck(pool: Pick<pg.Pool, 'ending' | 'ended'>): ReadinessCheck {
  return {
    name: 'pool',
    failure: "this instance's database pool is closed",
    run: async () => {
      if (pool.ending || pool.ended) {
        throw new Error('pool closed');
      }
    },
  };
}
