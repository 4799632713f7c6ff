import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * When a request must be answered by: one instant from its arrival, covering every wait it makes
 * (a rate-limit decision, a connection, each statement) and the work between them. Remaining time
 * is computed from that instant, so a request costs no timer of its own for it.
 */
export interface DatabaseDeadline {
  /** performance.now() by which the request's waits must end. */
  readonly at: number;
  /** Milliseconds left; 0 or less once passed. */
  remainingMs(): number;
}

class Deadline implements DatabaseDeadline {
  readonly at: number;

  constructor(at: number) {
    this.at = at;
  }

  remainingMs(): number {
    return this.at - performance.now();
  }
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
  return withDeadlineAt(performance.now() + ms, work);
}

/** withDatabaseDeadline ending at `at` (performance.now()), such as a request's arrival plus its deadline. */
export function withDeadlineAt<T>(at: number, work: () => T): T {
  return deadlines.run(new Deadline(at), work);
}

/** The deadline of the work calling, if any (background work has none). */
export function currentDatabaseDeadline(): DatabaseDeadline | undefined {
  return deadlines.getStore();
}
