import { constants } from 'node:os';
import type { DatabaseHandle } from './database.ts';

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

let exiting = false;

/**
 * True once a signal is stopping the database: the process exits with the signal's code when it
 * has stopped, so a command failing meanwhile (its connection cut by the stop) must not exit first.
 */
export function exitingOnSignal(): boolean {
  return exiting;
}

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
      exiting = true;
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
