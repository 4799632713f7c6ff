import type { Logger } from 'pino';

/**
 * One line per request, after the response is decided; route is the pattern, never the raw path.
 * Successful probes of `quietRoutes` (Kubernetes polls them every few seconds) log at debug, so
 * they neither drown the log nor cost the probe its budget; a failing probe still logs at info.
 */
export function accessLog(parent: Logger, quietRoutes: ReadonlySet<string> = new Set()) {
  // Its fields are the frame's own, never a credential: redaction (a third of a line's cost) is left out.
  const logger = parent.child({}, { redact: { paths: [] } });
  return function logRequest(request: AnsweredRequest): void {
    const level = request.status < 400 && quietRoutes.has(request.route) ? 'debug' : 'info';
    if (logger.isLevelEnabled(level)) {
      logger[level](
        {
          request_id: request.requestId,
          // Sampled, the mixin writes the same with span_id; sampled out, the caller's trace (undefined is left out).
          trace_id: request.traceId,
          method: request.method,
          route: request.route,
          status: request.status,
          duration_ms: Math.round(request.durationMs * 100) / 100,
          client_ip: request.clientAddress,
        },
        'request',
      );
    }
  };
}

/** What the access log and the duration metric record of an answered request. */
export interface AnsweredRequest {
  requestId: string;
  /** The request's trace id (ServerSpan.traceId): the sampled span's or the caller's; undefined without either. */
  traceId?: string | undefined;
  method: string;
  /** The route pattern, or `unmatched`. */
  route: string;
  status: number;
  durationMs: number;
  clientAddress: string;
}
