import { type IncomingMessage, type Server, createServer } from 'node:http';
import Koa from 'koa';
import type { Logger } from 'pino';
import { accessLog } from '../platform/http/accessLog.ts';
import { jsonBody } from '../platform/http/body.ts';
import { answerClientErrors } from '../platform/http/clientError.ts';
import { type StatusTable } from '../platform/errors.ts';
import { platformStatuses } from '../platform/http/errors.ts';
import { databaseUnavailableReason } from '../platform/db/unavailable.ts';
import { mergeStatusTables, problemOf, problemRenderer } from '../platform/http/problem.ts';
import { type EarlyAnswer, createRequestFrame } from '../platform/http/requestFrame.ts';
import { type StaticSite, staticAssets } from '../platform/http/staticAssets.ts';
import type { BoundRoute } from '../platform/http/route.ts';
import { type RouteGuard, buildRouter } from '../platform/http/router.ts';
import type { HttpMetrics } from '../platform/metrics/registry.ts';

export interface HttpAppOptions {
  logger: Logger;
  routes: BoundRoute[];
  guard: RouteGuard;
  statuses: StatusTable[];
  metrics: HttpMetrics;
  bodyLimitBytes: number;
  /** How long an idle keep-alive connection stays open (Node's default is 5 s). */
  keepAliveTimeoutMs?: number;
  /** How long after its arrival a request must be answered by (limiter, connection, statements); 5 s by default. */
  requestDeadlineMs?: number;
  /** Resolves the client address of a request (trusted proxies); the socket peer by default. */
  clientAddress?: (request: IncomingMessage) => string;
  /** True when the request's socket peer is a trusted proxy, whose traceparent may decide sampling; nobody by default. */
  trustedPeer?: (request: IncomingMessage) => boolean;
  /** Answers a request before Koa when it returns an error (refusals known from memory). */
  answerEarly?: EarlyAnswer;
  /** True once the instance drains: answers then close their connection instead of keeping it alive. */
  draining?: () => boolean;
  /**
   * Middleware that answers from the request line and headers alone (maintenance mode, limits):
   * it runs before a body is read, so a refused request never costs its parsing.
   */
  beforeBody?: Koa.Middleware[];
  /** Middleware around the router, once the body is parsed (modules' aroundRouter phase). */
  aroundRouter?: Koa.Middleware[];
  /** Browser pages answered from memory before maintenance and the routes (/console, /docs). */
  pages?: StaticSite[];
}

/**
 * Retry-After of 503 database_unavailable: a restart or failover takes seconds, and every client
 * retrying at once a second later would only add to the connections the database is refusing.
 */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

/** Kubernetes probes: logged at debug while they succeed, and never traced (ADR 0130). */
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
    renderError: problemRenderer(statuses, options.logger, { reason: databaseUnavailableReason, retryAfterSeconds: DATABASE_RETRY_AFTER_SECONDS }),
    problemOf: (error, requestId) => problemOf(statuses, error, requestId),
    logRequest: accessLog(options.logger, PROBE_ROUTES),
    metrics: options.metrics,
    draining: options.draining,
    requestDeadlineMs: options.requestDeadlineMs,
    tracing: { trustedPeer: options.trustedPeer, untracedPaths: PROBE_ROUTES },
  });
  app.use(frame.middleware);
  if (options.pages) {
    app.use(staticAssets(options.pages));
  }
  for (const middleware of options.beforeBody ?? []) {
    app.use(middleware);
  }
  app.use(jsonBody(options.bodyLimitBytes));
  for (const middleware of options.aroundRouter ?? []) {
    app.use(middleware);
  }
  for (const middleware of buildRouter(options.routes, options.guard, { requestDeadlineMs: options.requestDeadlineMs ?? 5_000 })) {
    app.use(middleware);
  }
  const handle = app.callback();
  const early = options.answerEarly;
  const server = createServer(early ? (req, res) => void (frame.answerEarly(req, res, early) || handle(req, res)) : handle);
  if (options.keepAliveTimeoutMs !== undefined) {
    // A load balancer reusing a connection the server has just closed gets a reset (a 502): the server must close last.
    server.keepAliveTimeout = options.keepAliveTimeoutMs;
    // Headers of a request must be allowed longer than an idle connection may wait for them.
    server.headersTimeout = options.keepAliveTimeoutMs + 1_000;
    // Bodies are at most APP_BODY_LIMIT_BYTES: a minute more than the headers is ample for any client.
    server.requestTimeout = server.headersTimeout + 60_000;
  }
  return answerClientErrors(server, options.logger);
}
