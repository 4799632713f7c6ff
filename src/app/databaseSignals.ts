import { constants } from 'node:os';
import type { DatabaseHandle } from './database.ts';

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * Until the returned function is called, SIGINT, SIGTERM or SIGHUP stop the embedded database
 * this process owns (`opening` may still be starting it), then exit with 128 + the signal's
 * number, as the signal alone would have: without this a signal ends the process and leaves the
 * server running. A second signal exits at once (the exit hook still asks the server to stop).
 */
export function releaseDatabaseOnSignal(opening: Promise<DatabaseHandle>): () => void {
  let releasing = false;
  const handlers = SIGNALS.map((signal) => {
    const code = 128 + constants.signals[signal];
    const handler = () => {
      if (releasing) {
        process.exit(code);
      }
      releasing = true;
      void opening
        .then((database) => database.release())
        .catch(() => undefined)
        .finally(() => process.exit(code));
    };
    process.on(signal, handler);
    return [signal, handler] as const;
  });
  return () => handlers.forEach(([signal, handler]) => process.removeListener(signal, handler));
}
