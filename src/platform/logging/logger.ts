import pino, { type Logger } from 'pino';

export type { Logger };

/** JSON logs on stdout; anything that looks like a credential is redacted wherever it appears. */
/**
 * fd 1 for the service; commands log to fd 2 so their stdout stays their output. Writes are
 * synchronous so nothing is lost when a process exits right after logging.
 */
export function createLogger(level: string, bindings: Record<string, unknown> = {}, fd: 1 | 2 = 1): Logger {
  return pino({
    level,
    base: { pid: process.pid, ...bindings },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: ['password', 'token', 'access_token', 'refresh_token', 'authorization', '*.password', '*.token', 'headers.authorization'],
      censor: '[redacted]',
    },
  }, pino.destination({ fd, sync: true }));
}
