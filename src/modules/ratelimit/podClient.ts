import { waitingSpans } from './decisionSpans.ts';
import type { PodTakeMessage, PodTakenMessage } from './podDecisions.ts';
import type { BucketOutcome, TakeBuckets } from './store.ts';

/** The IPC channel of a forked instance to its primary: `process` in a `node:cluster` worker. */
export interface PodChannel {
  send(message: PodTakeMessage, callback: (error: Error | null) => void): unknown;
  on(event: 'message', listener: (message: unknown) => void): unknown;
}

/**
 * An instance limiter's batching through the pod: one batch in flight, the next leaving as soon as
 * it is answered; the primary's own batch window merges it with the other instances'. Each message
 * costs both processes a pipe write and a wake-up, so fewer, larger ones (ADR 0020, "Who sends the statement").
 */
export const POD_BATCHING = { maxInFlight: 1, batchWindowMs: 0 } as const;

interface Asked {
  resolve(outcomes: BucketOutcome[]): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

const isTaken = (message: unknown): message is PodTakenMessage =>
  typeof message === 'object' && message !== null && (message as { type?: unknown }).type === 'backplane:ratelimit:taken';

/**
 * Batches decided by the pod's primary (podDecisions.ts) instead of a pool of this instance's own.
 * The limiter's bound still covers the whole decision; `forgetAfterMs` only frees an answer that
 * never comes (a primary gone or stuck), well after the limiter stopped waiting for it.
 */
export function podBuckets(channel: PodChannel, forgetAfterMs: number): TakeBuckets {
  const asked = new Map<number, Asked>();
  let nextId = 1;
  channel.on('message', (message) => {
    if (!isTaken(message)) {
      return;
    }
    const entry = asked.get(message.id);
    if (!entry) {
      return;
    }
    asked.delete(message.id);
    clearTimeout(entry.timer);
    if (message.outcomes) {
      entry.resolve(message.outcomes);
    } else {
      entry.reject(new Error(`the pod's rate-limit decision failed: ${message.error ?? 'no reason given'}`));
    }
  });
  return (limiter, rule, keys, hits, waiting) =>
    new Promise<BucketOutcome[]>((resolve, reject) => {
      const id = nextId++;
      const timer = setTimeout(() => {
        asked.delete(id);
        reject(new Error(`the pod's primary did not answer a rate-limit decision in ${forgetAfterMs} ms`));
      }, forgetAfterMs).unref();
      asked.set(id, { resolve, reject, timer });
      const message: PodTakeMessage = {
        type: 'backplane:ratelimit:take',
        id,
        limiter,
        rule: { intervalUs: rule.intervalUs, burst: rule.burst },
        keys: keys.map((key) => key.toString('hex')),
        hits,
      };
      // Only traced, sampled requests add anything to the message: with tracing off it is as before.
      if (waiting) {
        message.waiting = waitingSpans(waiting);
      }
      try {
        channel.send(message, (error) => {
          if (error && asked.delete(id)) {
            clearTimeout(timer);
            reject(error);
          }
        });
      } catch (error) {
        asked.delete(id);
        clearTimeout(timer);
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    });
}
