import http from 'node:http';
import { setPriority } from 'node:os';

export interface LatencySample {
  /** When the call was due (performance.now()). */
  at: number;
  /** From when it was sent to its answer, in ms; time queued for a socket behind slow calls counts. */
  ms: number;
}

export interface SteadyCalls {
  /** Latencies of the calls due inside [from, to). */
  window(from: number, to: number): { p99Ms: number; calls: number; failed: number };
  stop(): void;
}

const TICK_MS = 1;
const CALLER_NICENESS = -10;

/**
 * Calls `url` at a steady `perSecond`, open loop: a call is due every 1/perSecond s whatever the
 * earlier ones are doing, so a slow answer cannot hold back the calls behind it (no coordinated
 * omission); they wait for a socket, and that wait is part of their latency.
 * autocannon's own rate sends each second's quota in a burst at the start of the second, which
 * measures the burst rather than the server. Keep-alive sockets, at most `sockets` at once.
 */
export function steadyCalls(url: string, perSecond: number, headers: Record<string, string>, sockets = 16): SteadyCalls {
  // This process must not be what is slow: starved of CPU by the work being measured, its timer
  // fires late and sends the calls it owes in a burst, which then queue at the server. On Linux
  // the priority is the calling thread's; without the right to raise it the calls go on as before.
  try {
    setPriority(CALLER_NICENESS);
  } catch {
    console.warn("steady calls: could not raise this thread's CPU priority; bursts after stalls will count in the latencies");
  }
  const agent = new http.Agent({ keepAlive: true, maxSockets: sockets });
  const samples: Array<LatencySample & { failed: boolean }> = [];
  const intervalMs = 1000 / perSecond;
  const started = performance.now();
  let sent = 0;
  const call = (due: number) => {
    // Timed from the send, not from when it was due: a late timer is this process's delay, not the server's.
    const sentAt = performance.now();
    const request = http.get(url, { agent, headers }, (response) => {
      response.resume();
      response.on('end', () => samples.push({ at: due, ms: performance.now() - sentAt, failed: response.statusCode !== 200 }));
    });
    request.on('error', () => samples.push({ at: due, ms: performance.now() - sentAt, failed: true }));
  };
  const timer = setInterval(() => {
    const now = performance.now();
    while (started + sent * intervalMs <= now) {
      call(started + sent * intervalMs);
      sent += 1;
    }
  }, TICK_MS);
  return {
    window(from, to) {
      const inside = samples.filter((s) => s.at >= from && s.at < to);
      const sorted = inside.map((s) => s.ms).sort((a, b) => a - b);
      return {
        p99Ms: sorted.length ? sorted[Math.ceil(sorted.length * 0.99) - 1]! : NaN,
        calls: inside.length,
        failed: inside.filter((s) => s.failed).length,
      };
    },
    stop() {
      clearInterval(timer);
      agent.destroy();
    },
  };
}
