import type { IncomingMessage } from 'node:http';
import { type Context, ROOT_CONTEXT, type Span, SpanKind, SpanStatusCode, TraceFlags, context, propagation, trace } from '@opentelemetry/api';
import type { Context as KoaContext, Middleware, Next } from 'koa';
import { tracingEnabled } from './setup.ts';
import { tracer } from './tracer.ts';
import { trustRemoteParent } from './trustedParent.ts';

/** A request's server span, with the context its handlers run in. */
export interface ServerSpan {
  /**
   * The request's trace id: the span's when it is sampled, else the caller's from a valid
   * traceparent (sampled out, its log line and request id still join the caller's trace), else undefined.
   */
  readonly traceId: string | undefined;
  /** Runs `work` with this span active, so statements, calls and log lines below are its children. */
  run<T>(work: () => T): T;
  /** Names the span after the route pattern, records the status and the client address (when known), and ends it. */
  end(route: string, status: number, clientAddress?: string): void;
}

/** Who may decide for the request frame's spans, and which requests get none. */
export interface RequestTracing {
  /** True when the request's socket peer is a trusted proxy (APP_TRUSTED_PROXIES): only its sampled flag is followed. */
  trustedPeer?: ((request: IncomingMessage) => boolean) | undefined;
  /** Paths that never get a span, whatever their headers: the probes. */
  untracedPaths?: ReadonlySet<string> | undefined;
}

/** The request frame's tracing, when tracing is on. */
export interface TracedRequests {
  middleware: Middleware;
  /** The caller's trace id of a request answered without a span (before Koa), from a valid traceparent. */
  callerTraceId(request: IncomingMessage): string | undefined;
}

/**
 * A request sampled out runs without a span context (ADR 0130, amended): entering one cost every
 * request an AsyncLocalStorage run and every promise below it a propagation, for spans the
 * parent-based sampler would drop. Its statements and calls make none (requireParent* options),
 * and its span, which records nothing, is neither named nor ended.
 */
const SAMPLED_OUT: ServerSpan = { traceId: undefined, run: (work) => work(), end: () => undefined };

/** A request sampled out whose caller sent a trace: the same frame, keeping the caller's trace id. */
const sampledOutOf = (traceId: string): ServerSpan => ({ traceId, run: SAMPLED_OUT.run, end: SAMPLED_OUT.end });

const NO_PEER_TRUSTED = () => false;
const NO_PATHS: ReadonlySet<string> = new Set();

/** The longest url.path recorded: an unmatched path is whatever a client sent. */
const MAX_URL_PATH = 256;

/** The headers the registered propagators read (OTEL_PROPAGATORS), asked at the first request: tracing has started by then. */
let propagatorFields: readonly string[] | undefined;

/** The context the configured propagators read from the request's headers, or undefined when it has none of their headers. */
function extractCaller(req: IncomingMessage, active: Context): Context | undefined {
  propagatorFields ??= propagation.fields();
  return propagatorFields.some((field) => req.headers[field] !== undefined) ? propagation.extract(active, req.headers) : undefined;
}

/**
 * Starts the server span of a request, continuing the trace of an incoming traceparent (through
 * the propagators of OTEL_PROPAGATORS). The caller's sampled flag is followed only when
 * `trustedPeer` says the socket peer is a trusted proxy; anyone else's trace is continued but
 * sampled by the configured ratio (sampler.ts). Recorded: the method, the route pattern, the
 * path (no query, at most MAX_URL_PATH characters), the scheme, the protocol, the client address
 * and the status; never the query, a header or a body.
 */
export function startServerSpan(req: IncomingMessage, method: string, trustedPeer: (request: IncomingMessage) => boolean = NO_PEER_TRUSTED): ServerSpan {
  const active = context.active();
  let parent = extractCaller(req, active) ?? active;
  // Only a traceparent that parsed: the propagator drops a malformed one, all-zero ids and upper case.
  const caller = parent === active ? undefined : trace.getSpanContext(parent);
  const callerTraceId = caller?.isRemote ? caller.traceId : undefined;
  if (callerTraceId !== undefined && trustedPeer(req)) {
    parent = trustRemoteParent(parent);
  }
  // No attributes at the start: the samplers OTEL_TRACES_SAMPLER names decide on the trace id alone,
  // and a request sampled out (most of them) then builds none (bench/README.md, issue 34).
  const span: Span = tracer.startSpan(method, { kind: SpanKind.SERVER }, parent);
  if (!span.isRecording()) {
    return callerTraceId === undefined ? SAMPLED_OUT : sampledOutOf(callerTraceId);
  }
  span.setAttributes({
    'http.request.method': method,
    'url.scheme': 'encrypted' in req.socket && req.socket.encrypted ? 'https' : 'http',
    'url.path': urlPath(req.url),
    'network.protocol.version': req.httpVersion,
  });
  const spanContext = span.spanContext();
  const sampled = (spanContext.traceFlags & TraceFlags.SAMPLED) !== 0;
  return {
    traceId: sampled ? spanContext.traceId : callerTraceId,
    run: (work) => context.with(trace.setSpan(parent, span), work),
    end(route, status, clientAddress) {
      span.updateName(`${method} ${route}`);
      span.setAttribute('http.route', route);
      span.setAttribute('http.response.status_code', status);
      if (clientAddress) {
        span.setAttribute('client.address', clientAddress);
      }
      if (status >= 500) {
        span.setStatus({ code: SpanStatusCode.ERROR });
        span.setAttribute('error.type', String(status));
      }
      span.end();
    },
  };
}

/**
 * The path of a request target, as sent (not decoded), without query or fragment, at most
 * MAX_URL_PATH characters: route values are names and ids, never credentials, but an unmatched
 * path is anything a client wrote. An absolute-form target (`GET http://host/path`) gives its path.
 */
export function urlPath(target = '/'): string {
  let path = target;
  if (!path.startsWith('/')) {
    try {
      path = new URL(path).pathname;
    } catch {
      // `*` (OPTIONS) or nonsense: recorded as sent, bounded below.
    }
  }
  const end = path.search(/[?#]/);
  return (end === -1 ? path : path.slice(0, end)).slice(0, MAX_URL_PATH);
}

/** The trace id of a request's valid traceparent, read through the configured propagators. */
function callerTraceId(req: IncomingMessage): string | undefined {
  const extracted = extractCaller(req, ROOT_CONTEXT);
  const caller = extracted && trace.getSpanContext(extracted);
  return caller?.isRemote ? caller.traceId : undefined;
}

type HandleRequest = (ctx: KoaContext, next: Next, span?: ServerSpan) => Promise<void>;

/**
 * The request frame's middleware with a server span around each request but those of
 * `untracedPaths`; undefined while tracing is off, so the frame is then the one it always was.
 */
export function traceRequests(handleRequest: HandleRequest, options: RequestTracing = {}): TracedRequests | undefined {
  if (!tracingEnabled()) {
    return undefined;
  }
  const trustedPeer = options.trustedPeer ?? NO_PEER_TRUSTED;
  const untracedPaths = options.untracedPaths ?? NO_PATHS;
  return {
    middleware: (ctx, next) => {
      // ctx.path is parsed once per request and cached on it: the router reads it next.
      if (untracedPaths.has(ctx.path)) {
        return handleRequest(ctx, next);
      }
      const span = startServerSpan(ctx.req, ctx.method, trustedPeer);
      return span.run(() => handleRequest(ctx, next, span));
    },
    callerTraceId,
  };
}
