import { DEFAULT_DECISION_TIMEOUT_MS, type PodChannel, podBuckets } from '../modules/ratelimit/index.ts';
import type { Application } from './application.ts';
import type { Config } from './config.ts';
import { DRAIN_MESSAGE, LISTENER_CLOSED_MESSAGE, STOPPED_ACCEPTING_MESSAGE } from './messages.ts';
import { startInstance } from './instance.ts';
import { reportMetricsToPrimary } from './metricsServer.ts';

/** A forked instance: serves until the primary asks it to drain, or the primary is gone. */
export async function runWorker(application: Application, config: Config): Promise<void> {
  // A drain ordered while the instance still starts is kept, and carried out once it listens.
  let drainOrdered = false;
  const orderDrain = (message: unknown) => {
    drainOrdered ||= message === DRAIN_MESSAGE;
  };
  process.on('message', orderDrain);
  // The primary decides every instance's rate limits in shared statements (ADR 0020, amendment 2026-11-25).
  const rateLimitPod = config.rateLimitBatching === 'pod' ? podBuckets(process as unknown as PodChannel, 2 * DEFAULT_DECISION_TIMEOUT_MS) : undefined;
  const instance = await startInstance(application, config, { workerSlot: process.env.BACKPLANE_WORKER_SLOT ?? '0', rateLimitPod });
  process.off('message', orderDrain);
  reportMetricsToPrimary(instance.registry);
  // The primary answers once no instance accepts on the port; a primary gone cannot hand out connections either.
  const listenerClosed = () =>
    new Promise<void>((resolve) => {
      if (!process.connected) {
        resolve();
        return;
      }
      const onMessage = (message: unknown) => message === LISTENER_CLOSED_MESSAGE && done();
      const done = () => {
        process.off('message', onMessage);
        process.off('disconnect', done);
        resolve();
      };
      process.on('message', onMessage);
      process.once('disconnect', done);
      process.send!(STOPPED_ACCEPTING_MESSAGE, () => undefined);
    });
  const stop = () =>
    void instance.drain({ listenerClosed }).then(
      () => process.exit(0),
      () => process.exit(1),
    );
  process.on('message', (message) => {
    if (message === DRAIN_MESSAGE) {
      stop();
    }
  });
  process.on('SIGTERM', stop);
  // Ctrl-C reaches the whole process group; the primary orders the drain.
  process.on('SIGINT', () => undefined);
  process.on('disconnect', stop);
  if (drainOrdered || !process.connected) {
    stop();
  }
}
