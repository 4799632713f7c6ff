import { DatabaseUnavailableError } from './deadline.ts';

/** Socket errors of a database that is down, restarting or out of reach. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/** SQLSTATEs of a server that is shutting down, starting up or full (class 08 is matched as a class). */
const UNAVAILABLE_SQLSTATES = new Map([
  ['57P01', 'admin_shutdown'],
  ['57P02', 'crash_shutdown'],
  ['57P03', 'cannot_connect_now'],
  ['53300', 'too_many_connections'],
]);

/** pg and pg-pool signal a lost or unreachable server with plain errors; their messages are all there is. */
const DRIVER_MESSAGES: Array<[RegExp, string]> = [
  [/^timeout exceeded when trying to connect/, 'acquire_timeout'],
  [/^Connection terminated/, 'connection_lost'],
  [/^Query read timeout/, 'query_timeout'],
  [/is not queryable$/, 'connection_lost'],
];

function ownReason(error: unknown): string | undefined {
  if (error instanceof DatabaseUnavailableError) {
    return error.reason;
  }
  if (!(error instanceof Error)) {
    return undefined;
  }
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (NETWORK_CODES.has(code)) {
      return code.toLowerCase();
    }
    if (/^08[0-9A-Z]{3}$/.test(code)) {
      return 'connection_exception';
    }
    const known = UNAVAILABLE_SQLSTATES.get(code);
    if (known) {
      return known;
    }
  }
  return DRIVER_MESSAGES.find(([pattern]) => pattern.test(error.message))?.[1];
}

/**
 * Why an error means the database cannot be used right now, or undefined when it means something
 * else (a bug, a constraint, a module's own statement timeout). Follows causes and the errors of
 * an AggregateError (a connect that tried several addresses).
 */
export function databaseUnavailableReason(error: unknown, depth = 0): string | undefined {
  if (depth > 4 || error === null || typeof error !== 'object') {
    return undefined;
  }
  const own = ownReason(error);
  if (own) {
    return own;
  }
  if (error instanceof AggregateError && error.errors.length > 0 && error.errors.every((inner) => databaseUnavailableReason(inner, depth + 1))) {
    return databaseUnavailableReason(error.errors[0], depth + 1);
  }
  return databaseUnavailableReason((error as { cause?: unknown }).cause, depth + 1);
}
