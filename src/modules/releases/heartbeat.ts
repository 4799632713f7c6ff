import type { Logger } from 'pino';
import type { Queryable } from '../../platform/db/pool.ts';
import { withTimeout } from '../../platform/time.ts';
import { type InstanceRecord, beatInstance, markInstanceStopped, registerInstance } from './store.ts';

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
      const touch = () => withTimeout(beatInstance(db, record.instanceId, (3 * intervalMs) / 1000), 2_000);
      let beaten = registered ? await touch() : undefined;
      if (!beaten?.touched) {
        await withTimeout(registerInstance(db, record), 2_000);
        registered = true;
        beaten = await touch();
      }
      running = beaten.running;
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
