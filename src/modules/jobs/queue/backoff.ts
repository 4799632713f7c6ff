import type { QueueBackoff } from './queueTask.ts';

/**
 * The wait before the attempt after `attempt` failed: initialSeconds doubled per earlier failure,
 * capped at maxSeconds, then drawn at random from its upper half ("equal jitter"), so jobs that
 * failed together (an outage) do not all come back in the same second, and none comes back sooner
 * than half its step.
 */
export function backoffSeconds(backoff: Required<QueueBackoff>, attempt: number, random: () => number = Math.random): number {
  const step = Math.min(backoff.maxSeconds, backoff.initialSeconds * 2 ** Math.max(0, attempt - 1));
  return step / 2 + random() * (step / 2);
}
