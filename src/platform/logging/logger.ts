import pino, { type Logger } from 'pino';
import { traceLogOptions } from '../tracing/logFields.ts';
import { tracingConfigured } from '../tracing/setup.ts';

export type { Logger };

let lastMs = 0;
let lastTime = '';
/** pino's ISO `time`, formatted once per millisecond: a flood logs thousands of lines in one. */
function isoTime(): string {
  const now = Date.now();
  if (now !== lastMs) {
    lastMs = now;
    lastTime = `,"time":"${new Date(now).toISOString()}"`;
  }
  return lastTime;
}

/**
 * JSON logs; anything that looks like a credential is redacted wherever it appears. fd 1 for the
 * service; commands log to fd 2 so their stdout stays their output. Service writes are asynchronous,
 * off the request path, and flushed synchronously when the process exits, so no line is lost.
 */
export function createLogger(level: string, bindings: Record<string, unknown> = {}, fd: 1 | 2 = 1): Logger {
  const destination = pino.destination({ fd, sync: fd === 2 });
  if (fd === 1) {
    process.on('exit', () => destination.flushSync());
  }
  return pino(
    {
      level,
      base: { pid: process.pid, ...bindings },
      timestamp: isoTime,
      // Lines written inside a traced request or job carry its trace_id and span_id (ADR 0130);
      // without an OTLP endpoint no span is ever active, and a line costs no lookup.
      ...(tracingConfigured() ? traceLogOptions : {}),
      redact: {
        paths: ['password', 'token', 'access_token', 'refresh_token', 'authorization', '*.password', '*.token', 'headers.authorization'],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
