import Koa, { type Context } from 'koa';
import type { Logger } from 'pino';
import { accessLog } from '../platform/http/accessLog.ts';
import { jsonBody } from '../platform/http/body.ts';
import { platformStatuses, type StatusTable } from '../platform/http/errors.ts';
import { mergeStatusTables, problemRenderer } from '../platform/http/problem.ts';
import { requestFrame } from '../platform/http/requestFrame.ts';
import type { AnyRoute } from '../platform/http/route.ts';
import { type RouteGuard, buildRouter } from '../platform/http/router.ts';
import type { HttpMetrics } from '../platform/metrics/registry.ts';

export interface HttpAppOptions {
  logger: Logger;
  routes: AnyRoute[];
  guard: RouteGuard;
  statuses: StatusTable[];
  metrics: HttpMetrics;
  bodyLimitBytes: number;
  /** Resolves the client address of a request (trusted proxies); the socket peer by default. */
  clientAddress?: (ctx: Context) => string;
  /** True once the instance drains: answers then close their connection instead of keeping it alive. */
  draining?: () => boolean;
  /**
   * Middleware that answers from the request line and headers alone (maintenance mode, limits):
   * it runs before a body is read, so a refused request never costs its parsing.
   */
  beforeBody?: Koa.Middleware[];
}

/** Kubernetes probes: logged at debug while they succeed. */
const PROBE_ROUTES = new Set(['/livez', '/readyz']);

/** The middleware order, outermost first, is the one place to read how a request flows. */
export function createHttpApp(options: HttpAppOptions): Koa {
  const app = new Koa();
  app.silent = true;
  const statuses = mergeStatusTables([platformStatuses, ...options.statuses]);
  app.use(
    requestFrame({
      clientAddress: options.clientAddress ?? ((ctx: Context) => ctx.req.socket.remoteAddress ?? ''),
      renderError: problemRenderer(statuses, options.logger),
      logRequest: accessLog(options.logger, PROBE_ROUTES),
      metrics: options.metrics,
      draining: options.draining,
    }),
  );
  for (const middleware of options.beforeBody ?? []) {
    app.use(middleware);
  }
  app.use(jsonBody(options.bodyLimitBytes));
  for (const middleware of buildRouter(options.routes, options.guard)) {
    app.use(middleware);
  }
  return app;
}
