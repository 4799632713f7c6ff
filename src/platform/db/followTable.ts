import type { Logger } from 'pino';
import type { NotificationListener } from './listener.ts';

export interface TableFollower {
  /** Reloads now; concurrent calls share one reload, and a call during a reload queues one more. */
  reload(): Promise<void>;
  stop(): void;
}

/**
 * Keeps an in-memory copy of a table current: reloads on every NOTIFY on its channel, whenever the
 * listener (re)connects, and every resyncMs. A failed reload is logged and the last copy kept.
 */
export function followTable(options: {
  listener: NotificationListener;
  channel: string;
  resyncMs: number;
  load: () => Promise<void>;
  logger: Logger;
  what: string;
}): TableFollower {
  let reloading: Promise<void> | undefined;
  let again = false;

  function reload(): Promise<void> {
    if (reloading) {
      again = true;
      return reloading;
    }
    reloading = (async () => {
      do {
        again = false;
        try {
          await options.load();
        } catch (error) {
          options.logger.warn({ err: error }, `${options.what} could not be reloaded; serving the last known`);
        }
      } while (again);
    })().finally(() => {
      reloading = undefined;
    });
    return reloading;
  }

  options.listener.listen(options.channel, () => void reload());
  options.listener.onConnected(() => void reload());
  const timer = setInterval(() => void reload(), options.resyncMs);
  timer.unref();
  return { reload, stop: () => clearInterval(timer) };
}
