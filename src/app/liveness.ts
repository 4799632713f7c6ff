import type { Worker } from 'node:cluster';
import { PING_MESSAGE, PONG_MESSAGE } from './messages.ts';

/** An instance still starting (compiling and loading code blocks its loop for seconds on a busy machine) gets at least this long. */
const STARTING_GRACE_MS = 60_000;

/** In an instance, before anything else loads: answer the primary's liveness pings. */
export function answerLivenessPings(): void {
  process.on('message', (message) => {
    if (message === PING_MESSAGE && process.connected) {
      process.send!(PONG_MESSAGE, () => undefined);
    }
  });
}

export interface LivenessWatch {
  /** Starts watching a freshly forked worker. */
  watch(worker: Worker): void;
  stop(): void;
}

/**
 * The primary's side: pings every instance over the cluster channel and reports the one that has
 * not answered for livenessMs (its event loop is stuck: it cannot answer anything else either).
 */
export function watchLiveness(livenessMs: number, onSilent: (worker: Worker, silentMs: number) => void): LivenessWatch {
  const lastHeard = new Map<Worker, { at: number; listening: boolean }>();
  const periodMs = Math.max(250, Math.min(5_000, livenessMs / 4));
  let lastCheck = performance.now();
  const check = () => {
    const now = performance.now();
    if (now - lastCheck > periodMs + livenessMs / 2) {
      // The primary itself was stalled (or suspended): answers may be waiting unread; start counting again.
      lastHeard.forEach((heard) => (heard.at = now));
    }
    lastCheck = now;
    for (const [worker, heard] of lastHeard) {
      if (worker.isDead() || !worker.isConnected()) {
        lastHeard.delete(worker);
        continue;
      }
      const limit = heard.listening ? livenessMs : Math.max(livenessMs, STARTING_GRACE_MS);
      if (now - heard.at > limit) {
        lastHeard.delete(worker);
        onSilent(worker, now - heard.at);
        continue;
      }
      // A callback takes a failed send (the channel closing under it) instead of an 'error' nobody listens to.
      worker.send(PING_MESSAGE, () => undefined);
    }
  };
  // Several pings per period: one delayed message alone never makes an instance look stuck.
  const timer = setInterval(check, periodMs);
  timer.unref();
  return {
    watch(worker) {
      const heard = { at: performance.now(), listening: false };
      lastHeard.set(worker, heard);
      worker.once('listening', () => {
        heard.at = performance.now();
        heard.listening = true;
      });
      worker.on('message', (message) => {
        if (message === PONG_MESSAGE) {
          heard.at = performance.now();
        }
      });
    },
    stop() {
      clearInterval(timer);
      lastHeard.clear();
    },
  };
}
