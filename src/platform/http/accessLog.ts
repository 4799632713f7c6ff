import type { Context, Next } from 'koa';
import type { Logger } from 'pino';

/** One line per request, after the response is decided; route is the pattern, never the raw path. */
export function accessLog(logger: Logger) {
  return async function logRequest(ctx: Context, next: Next): Promise<void> {
    const started = performance.now();
    try {
      await next();
    } finally {
      logger.info(
        {
          request_id: ctx.state.requestId,
          method: ctx.method,
          route: (ctx.state.routePattern as string | undefined) ?? 'unmatched',
          status: ctx.status,
          duration_ms: Math.round((performance.now() - started) * 100) / 100,
          client_ip: ctx.state.clientAddress,
        },
        'request',
      );
    }
  };
}
