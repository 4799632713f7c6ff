/**
 * When an instance's limiter sends its next statement (the pod's primary keeps its own timer,
 * podDecisions.ts, and looks again on every take). Takes that arrive in one turn of the event loop
 * share one. Under load a statement keeps leaving right after
 * the previous one returned and would carry only what arrived during that round trip: the clients
 * just answered come back a moment later and wait for the statement after. A statement costs far
 * more than a key, so after one of several keys the next waits `waitMs` for them (ADR 0020).
 */
export function scheduledFlushes(flush: () => void): (waitMs?: number) => void {
  let scheduled = false;
  const run = () => {
    scheduled = false;
    flush();
  };
  return (waitMs = 0) => {
    if (scheduled) {
      return;
    }
    scheduled = true;
    if (waitMs > 0) {
      setTimeout(run, waitMs);
    } else {
      setImmediate(run);
    }
  };
}

/**
 * One statement at a time while that keeps up; a second one only once enough keys wait that
 * parallel round trips beat a larger batch (small batches cost the database far more per key).
 */
export const mayStartStatement = (waiting: number, inFlight: number, maxInFlight: number, parallelBatchKeys: number): boolean =>
  waiting > 0 && inFlight < maxInFlight && (inFlight === 0 || waiting >= parallelBatchKeys);
