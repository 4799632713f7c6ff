import { AsyncLocalStorage } from 'node:async_hooks';

/** The moment by which a request's database work must be done. */
export interface DatabaseDeadline {
  /** Milliseconds left; 0 or less once passed. */
  remainingMs(): number;
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
 * createPool): the request frame's way to hand its deadline to code that only sees a pool.
 */
export function withDatabaseDeadline<T>(ms: number, work: () => T): T {
  const at = performance.now() + ms;
  return deadlines.run({ remainingMs: () => at - performance.now() }, work);
}

/** The deadline of the work calling, if any (background work has none). */
export function currentDatabaseDeadline(): DatabaseDeadline | undefined {
  return deadlines.getStore();
}
