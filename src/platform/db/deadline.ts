import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * How long a request may still wait on the database. It counts only time spent waiting (for a
 * connection, for a statement), overlapping waits once: a slow password hash or identity provider
 * spends none of it.
 */
export interface DatabaseDeadline {
  /** Milliseconds of waiting left; 0 or less once passed. */
  remainingMs(): number;
  /** Starts a wait on the database; the returned function ends it (calling it again does nothing). */
  startWaiting(): () => void;
}

function databaseBudget(ms: number): DatabaseDeadline {
  let spent = 0;
  let waiting = 0;
  let since = 0;
  return {
    remainingMs: () => ms - spent - (waiting > 0 ? performance.now() - since : 0),
    startWaiting() {
      if (waiting === 0) {
        since = performance.now();
      }
      waiting += 1;
      let ended = false;
      return () => {
        if (ended) {
          return;
        }
        ended = true;
        waiting -= 1;
        if (waiting === 0) {
          spent += performance.now() - since;
        }
      };
    },
  };
}

/**
 * The database could not be used: it refused, failed, or did not answer before the request's
 * deadline. `reason` is a short word for the log, never driver text for a client.
 */
export class DatabaseUnavailableError extends Error {
  override readonly name = 'DatabaseUnavailableError';
  readonly reason: string;

  constructor(reason: string, options: { cause?: unknown } = {}) {
    // Thrown once per request of an outage: a stack would cost every one of them for nothing.
    const depth = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      super(`the database is unavailable (${reason})`, options);
    } finally {
      Error.stackTraceLimit = depth;
    }
    this.reason = reason;
  }
}

const deadlines = new AsyncLocalStorage<DatabaseDeadline>();

/**
 * Runs work with a deadline every pool checkout and statement it starts is bounded by (see
 * createPool): the router's way to hand a request's deadline to code that only sees a pool.
 */
export function withDatabaseDeadline<T>(ms: number, work: () => T): T {
  return deadlines.run(databaseBudget(ms), work);
}

/** The deadline of the work calling, if any (background work has none). */
export function currentDatabaseDeadline(): DatabaseDeadline | undefined {
  return deadlines.getStore();
}
