import type { Context } from 'koa';
import type { Logger } from 'pino';

/**
 * One line per request, after the response is decided; route is the pattern, never the raw path.
 * Successful probes of `quietRoutes` (Kubernetes polls them every few seconds) log at debug, so
 * they neither drown the log nor cost the probe its budget; a failing probe still logs at info.
 */
export function accessLog(logger: Logger, quietRoutes: ReadonlySet<string> = new Set()) {
  return function logRequest(ctx: Context, route: string, durationMs: number): void {
    const level = ctx.status < 400 && quietRoutes.has(route) ? 'debug' : 'info';
    if (logger.isLevelEnabled(level)) {
      logger[level](
        {
          request_id: ctx.state.requestId,
          method: ctx.method,
          route,
          status: ctx.status,
          duration_ms: Math.round(durationMs * 100) / 100,
          client_ip: ctx.state.clientAddress,
        },
        'request',
      );
    }
  };
}
