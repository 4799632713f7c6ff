import type { Logger } from 'pino';
import type { Queryable } from '../../platform/db/pool.ts';
import { withTimeout } from '../../platform/time.ts';
import { type InstanceRecord, markInstanceStopped, registerInstance, touchInstance } from './store.ts';

export interface InstanceTracker {
  stop(): Promise<void>;
}

/**
 * Registers this instance, heartbeats every interval, marks it stopped on a clean stop. Failures are
 * logged and retried on the next beat: tracking never blocks start-up or serving.
 */
export function trackInstance(db: Queryable, record: InstanceRecord, logger: Logger, intervalMs: number): InstanceTracker {
  let registered = false;
  const beat = async () => {
    try {
      if (!registered || !(await withTimeout(touchInstance(db, record.instanceId), 2_000))) {
        await withTimeout(registerInstance(db, record), 2_000);
        registered = true;
      }
    } catch (error) {
      logger.warn({ err: error }, 'instance heartbeat failed; retrying at the next beat');
    }
  };
  const first = beat();
  const timer = setInterval(() => void beat(), intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await first;
      await withTimeout(markInstanceStopped(db, record.instanceId), 2_000).catch((error: unknown) =>
        logger.warn({ err: error }, 'could not mark the instance stopped'),
      );
    },
  };
}
