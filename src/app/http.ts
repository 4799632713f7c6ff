import Koa, { type Context, type Next } from 'koa';
import type { Logger } from 'pino';
import { accessLog } from '../platform/http/accessLog.ts';
import { jsonBody } from '../platform/http/body.ts';
import { platformStatuses, type StatusTable } from '../platform/http/errors.ts';
import { mergeStatusTables, problemMiddleware } from '../platform/http/problem.ts';
import { assignRequestId } from '../platform/http/requestId.ts';
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
  /** Middleware placed after body parsing and before routing (maintenance mode, limits). */
  beforeRoutes?: Koa.Middleware[];
}

/** Kubernetes probes: logged at debug while they succeed. */
const PROBE_ROUTES = new Set(['/livez', '/readyz']);

// Methods outside this list share one label value, so clients cannot mint metric series.
const METHOD_LABELS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** The middleware order, outermost first, is the one place to read how a request flows. */
export function createHttpApp(options: HttpAppOptions): Koa {
  const app = new Koa();
  app.silent = true;
  const statuses = mergeStatusTables([platformStatuses, ...options.statuses]);
  const resolveClient = options.clientAddress ?? ((ctx: Context) => ctx.req.socket.remoteAddress ?? '');

  app.use(assignRequestId);
  app.use(async (ctx: Context, next: Next) => {
    await next();
    if (options.draining?.()) {
      ctx.set('Connection', 'close');
    }
  });
  app.use(async (ctx: Context, next: Next) => {
    ctx.state.clientAddress = resolveClient(ctx);
    await next();
  });
  app.use(accessLog(options.logger, PROBE_ROUTES));
  app.use(async (ctx: Context, next: Next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      const route = (ctx.state.routePattern as string | undefined) ?? 'unmatched';
      options.metrics.observe(METHOD_LABELS.has(ctx.method) ? ctx.method : '_OTHER', route, ctx.status, (performance.now() - started) / 1000);
    }
  });
  app.use(problemMiddleware(statuses, options.logger));
  app.use(jsonBody(options.bodyLimitBytes));
  for (const middleware of options.beforeRoutes ?? []) {
    app.use(middleware);
  }
  for (const middleware of buildRouter(options.routes, options.guard)) {
    app.use(middleware);
  }
  return app;
}
