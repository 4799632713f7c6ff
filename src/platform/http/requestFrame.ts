import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Context, Middleware, Next } from 'koa';
import type { HttpMetrics } from '../metrics/registry.ts';
import type { AnsweredRequest } from './accessLog.ts';
import type { AppError } from '../errors.ts';
import type { Problem } from './problem.ts';
import { requestIdFor } from './requestId.ts';
import { type RequestTracing, type ServerSpan, traceRequests } from '../tracing/serverSpan.ts';

export interface RequestFrameOptions {
  /** The client address of a request (trusted proxies resolved). */
  clientAddress(request: IncomingMessage): string;
  /** Turns anything thrown below into the response (problem+json). */
  renderError(ctx: Context, error: unknown): void;
  /** A typed error as its problem and headers (for answers given before Koa). */
  problemOf(error: AppError, requestId: string): { problem: Problem; headers?: Record<string, string> } | undefined;
  logRequest(request: AnsweredRequest): void;
  metrics: HttpMetrics;
  /** True once the instance drains: answers then close their connection instead of keeping it alive. */
  draining?: () => boolean;
  /** APP_REQUEST_DEADLINE_SECONDS in ms: `ctx.state.deadlineAt` is the arrival plus this, the one deadline of every wait. */
  requestDeadlineMs?: number;
  /** Whose traceparent may decide sampling, and which paths get no span (tracing on only). */
  tracing?: RequestTracing;
}

/** What an early answer may look at: the request line and the resolved client, never the body. */
export interface EarlyRequest {
  /** The request's method, as sent. */
  method: string;
  /** The path, without the query string. */
  path: string;
  /** The client's address, trusted proxies resolved. */
  clientAddress: string;
}

/** Returns the error to answer a request with at once, before Koa, or undefined to let it through. */
export type EarlyAnswer = (request: EarlyRequest) => AppError | undefined;

// Methods outside this list share one label value, so clients cannot mint metric series.
const METHOD_LABELS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/**
 * What every request gets before and after the routes. `middleware` is one Koa middleware rather
 * than six: each async layer cost every request a promise and a microtask, and an error thrown
 * below crossed them all. In order: request id, client address, then the routes; errors rendered
 * as problems; then the connection header while draining, the duration metric, the access log.
 *
 * `answerEarly` gives the same frame (id, headers, problem body, metric, log line) to a request
 * answered before Koa builds a context for it: refusals known from memory, which are most of a
 * flood and cost a third of an ordinary request this way.
 */
export function createRequestFrame(options: RequestFrameOptions) {
  const deadlineMs = options.requestDeadlineMs ?? 5_000;
  const finish = (request: AnsweredRequest) => {
    options.metrics.observe(METHOD_LABELS.has(request.method) ? request.method : '_OTHER', request.route, request.status, request.durationMs / 1000);
    options.logRequest(request);
  };

  // The early answer resolves the client of every request it lets through, then Koa's path runs at
  // once for the same request: it reuses that address rather than resolving it again.
  let resolvedFor: IncomingMessage | undefined;
  let resolvedAddress = '';
  const clientAddressOf = (req: IncomingMessage): string => (req === resolvedFor ? resolvedAddress : options.clientAddress(req));

  const handleRequest = async function handleRequest(ctx: Context, next: Next, span?: ServerSpan): Promise<void> {
    const started = performance.now();
    const traceId = span?.traceId;
    const requestId = requestIdFor(ctx.get('X-Request-Id'), traceId);
    ctx.state.requestId = requestId;
    ctx.state.deadlineAt = started + deadlineMs;
    try {
      ctx.res.setHeader('X-Request-Id', requestId);
      ctx.state.clientAddress = clientAddressOf(ctx.req);
      resolvedFor = undefined;
      await next();
    } catch (error) {
      options.renderError(ctx, error);
    }
    if (options.draining?.()) {
      ctx.set('Connection', 'close');
    }
    const route = (ctx.state.routePattern as string | undefined) ?? 'unmatched';
    const clientAddress = (ctx.state.clientAddress as string | undefined) ?? '';
    finish({ requestId, traceId, method: ctx.method, route, status: ctx.status, durationMs: performance.now() - started, clientAddress });
    span?.end(route, ctx.status, clientAddress);
  };
  // Tracing off (no OTLP endpoint) leaves the request path as it was: not even a branch per request.
  const tracing = traceRequests(handleRequest, options.tracing);
  const middleware: Middleware = tracing?.middleware ?? handleRequest;

  /** True when `answer` answered the request; false leaves it to Koa untouched. */
  const answerEarly = (req: IncomingMessage, res: ServerResponse, answer: EarlyAnswer): boolean => {
    const started = performance.now();
    if (options.draining?.()) {
      return false;
    }
    const method = req.method ?? 'GET';
    const url = req.url ?? '/';
    const query = url.indexOf('?');
    let clientAddress: string;
    let error: AppError | undefined;
    try {
      clientAddress = options.clientAddress(req);
      error = answer({ method, path: query === -1 ? url : url.slice(0, query), clientAddress });
    } catch {
      // Koa's path answers the same request and reports whatever failed here.
      return false;
    }
    if (!error) {
      resolvedFor = req;
      resolvedAddress = clientAddress;
      return false;
    }
    const incoming = req.headers['x-request-id'];
    const traceId = tracing?.callerTraceId(req);
    const requestId = requestIdFor(typeof incoming === 'string' ? incoming : '', traceId);
    const typed = options.problemOf(error, requestId);
    if (!typed) {
      return false;
    }
    const body = JSON.stringify(typed.problem);
    res.writeHead(typed.problem.status, {
      'X-Request-Id': requestId,
      'Cache-Control': 'no-store',
      ...typed.headers,
      'Content-Type': 'application/problem+json',
      'Content-Length': Buffer.byteLength(body),
    });
    res.end(body);
    finish({ requestId, traceId, method, route: 'unmatched', status: typed.problem.status, durationMs: performance.now() - started, clientAddress });
    return true;
  };

  return { middleware, answerEarly };
}
