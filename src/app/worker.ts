import type { Config } from './config.ts';
import { DRAIN_MESSAGE } from './messages.ts';
import { startInstance } from './instance.ts';
import { reportMetricsToPrimary } from './metricsServer.ts';

/** A forked instance: serves until the primary asks it to drain, or the primary is gone. */
export async function runWorker(config: Config): Promise<void> {
  const instance = await startInstance(config, { workerSlot: process.env.BACKPLANE_WORKER_SLOT ?? '0' });
  reportMetricsToPrimary(instance.registry);
  const stop = () =>
    void instance.drain().then(
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
}
