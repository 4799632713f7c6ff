import type { Logger } from 'pino';
import type { Queryable } from '../../platform/db/pool.ts';
import { withTimeout } from '../../platform/time.ts';
import { type InstanceRecord, countRunningInstances, markInstanceStopped, registerInstance, touchInstance } from './store.ts';

export interface InstanceTracker {
  /** Running instances across the cluster (this one included) as read at the last good beat; undefined until then. */
  runningInstances(): number | undefined;
  stop(): Promise<void>;
}

/**
 * Registers this instance, heartbeats every interval, marks it stopped on a clean stop, and reads
 * how many instances run (running: not stopped, seen within three intervals). Failures are logged
 * and retried on the next beat, keeping the last count: tracking never blocks start-up or serving.
 */
export function trackInstance(db: Queryable, record: InstanceRecord, logger: Logger, intervalMs: number): InstanceTracker {
  let registered = false;
  let running: number | undefined;
  const beat = async () => {
    try {
      if (!registered || !(await withTimeout(touchInstance(db, record.instanceId), 2_000))) {
        await withTimeout(registerInstance(db, record), 2_000);
        registered = true;
      }
      // Read after this instance's own beat, so it counts itself.
      running = Math.max(1, await withTimeout(countRunningInstances(db, (3 * intervalMs) / 1000), 2_000));
    } catch (error) {
      logger.warn({ err: error }, 'instance heartbeat failed; retrying at the next beat');
    }
  };
  const first = beat();
  const timer = setInterval(() => void beat(), intervalMs);
  timer.unref();
  return {
    runningInstances: () => running,
    async stop() {
      clearInterval(timer);
      await first;
      await withTimeout(markInstanceStopped(db, record.instanceId), 2_000).catch((error: unknown) =>
        logger.warn({ err: error }, 'could not mark the instance stopped'),
      );
    },
  };
}
