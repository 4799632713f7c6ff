import type { Logger } from 'pino';
import { type ShareCount, UNCOUNTED, countShares, shareDivisor } from './shareCount.ts';
import type { NotificationListener } from '../../platform/db/listener.ts';
import type { Queryable } from '../../platform/db/pool.ts';
import { withTimeout } from '../../platform/time.ts';
import type { RuntimeSnapshots } from './runtimeSnapshot.ts';
import { INSTANCES_CHANNEL, type InstanceRecord, beatInstance, markInstanceStopped, registerInstance, writeRuntimeSnapshot } from './store.ts';

/** While this instance may not decide alone, it beats at least this often, so it becomes sure soon after the others counted it. */
const UNSURE_BEAT_MS = 1_000;

export interface InstanceTracker {
  /** Running instances across the cluster (this one included) as read at the last good beat; undefined until then. */
  runningInstances(): number | undefined;
  /** The divisor of this instance's share of a limit while it decides alone; undefined (no share) until every running instance counted it. */
  shareDivisor(): number | undefined;
  stop(): Promise<void>;
}

/**
 * Registers this instance, heartbeats every interval, marks it stopped on a clean stop, and reads
 * how many instances run (running: not stopped, seen within three intervals). A beat also writes
 * the count this instance holds and learns whether every running instance has counted as many
 * (ADR 0020, "The count"); until then it beats every second, and any instance's
 * announcement (a registration, a changed count) makes it beat at once. Failures are logged and
 * retried at the next beat, keeping the last count: tracking never blocks start-up or serving.
 */
export function trackInstance(
  db: Queryable,
  record: InstanceRecord,
  logger: Logger,
  intervalMs: number,
  listener?: Pick<NotificationListener, 'listen'>,
  snapshots?: RuntimeSnapshots,
): InstanceTracker {
  let registered = false;
  let count: ShareCount = UNCOUNTED;
  // The first beat after registering: another row that has beaten since has read this one.
  let countedSince: string | undefined;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let beating: Promise<void> | undefined;
  let again = false;
  const beat = async () => {
    try {
      const touch = () => withTimeout(beatInstance(db, record.instanceId, (3 * intervalMs) / 1000, count.counted, countedSince), 2_000);
      let beaten = registered ? await touch() : undefined;
      if (!beaten?.touched) {
        await withTimeout(registerInstance(db, record), 2_000);
        registered = true;
        // A row registered again may have gone uncounted meanwhile: it is counted from scratch.
        count = UNCOUNTED;
        countedSince = undefined;
        beaten = await touch();
      }
      countedSince ??= beaten.beatenAt;
      count = countShares(count, beaten);
      if (snapshots) {
        await withTimeout(writeRuntimeSnapshot(db, record.instanceId, snapshots.take()), 2_000);
      }
    } catch (error) {
      logger.warn({ err: error }, 'instance heartbeat failed; retrying at the next beat');
    }
  };
  // One beat at a time, so a beat whose answer is used never started before one already used.
  const beatNow = () => {
    if (stopped) {
      return;
    }
    if (beating) {
      again = true;
      return;
    }
    clearTimeout(timer);
    beating = beat().finally(() => {
      beating = undefined;
      if (again) {
        again = false;
        beatNow();
        return;
      }
      if (!stopped) {
        timer = setTimeout(beatNow, count.sure ? intervalMs : Math.min(intervalMs, UNSURE_BEAT_MS));
        timer.unref();
      }
    });
  };
  listener?.listen(INSTANCES_CHANNEL, (instanceId) => {
    if (instanceId !== record.instanceId) {
      beatNow();
    }
  });
  beatNow();
  return {
    runningInstances: () => count.counted,
    shareDivisor: () => shareDivisor(count),
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await beating;
      snapshots?.stop();
      await withTimeout(markInstanceStopped(db, record.instanceId), 2_000).catch((error: unknown) =>
        logger.warn({ err: error }, 'could not mark the instance stopped'),
      );
    },
  };
}
