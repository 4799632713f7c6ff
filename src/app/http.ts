import { type IncomingMessage, type Server, createServer } from 'node:http';
import Koa from 'koa';
import type { Logger } from 'pino';
import { accessLog } from '../platform/http/accessLog.ts';
import { jsonBody } from '../platform/http/body.ts';
import { answerClientErrors } from '../platform/http/clientError.ts';
import { platformStatuses, type StatusTable } from '../platform/http/errors.ts';
import { mergeStatusTables, problemOf, problemRenderer } from '../platform/http/problem.ts';
import { type EarlyAnswer, createRequestFrame } from '../platform/http/requestFrame.ts';
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
  clientAddress?: (request: IncomingMessage) => string;
  /** Answers a request before Koa when it returns an error (refusals known from memory). */
  answerEarly?: EarlyAnswer;
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

/**
 * The HTTP server of an instance. The middleware order, outermost first, is the one place to read
 * how a request flows; `answerEarly` may answer before any of it (refusals known from memory).
 */
export function createHttpServer(options: HttpAppOptions): Server {
  const app = new Koa();
  app.silent = true;
  const statuses = mergeStatusTables([platformStatuses, ...options.statuses]);
  const frame = createRequestFrame({
    clientAddress: options.clientAddress ?? ((request: IncomingMessage) => request.socket.remoteAddress ?? ''),
    renderError: problemRenderer(statuses, options.logger),
    problemOf: (error, requestId) => problemOf(statuses, error, requestId),
    logRequest: accessLog(options.logger, PROBE_ROUTES),
    metrics: options.metrics,
    draining: options.draining,
  });
  app.use(frame.middleware);
  for (const middleware of options.beforeBody ?? []) {
    app.use(middleware);
  }
  app.use(jsonBody(options.bodyLimitBytes));
  for (const middleware of buildRouter(options.routes, options.guard)) {
    app.use(middleware);
  }
  const handle = app.callback();
  const early = options.answerEarly;
  return answerClientErrors(createServer(early ? (req, res) => void (frame.answerEarly(req, res, early) || handle(req, res)) : handle), options.logger);
}
