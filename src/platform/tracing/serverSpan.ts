import type { IncomingMessage } from 'node:http';
import { type Span, SpanKind, SpanStatusCode, TraceFlags, context, propagation, trace } from '@opentelemetry/api';
import type { Context as KoaContext, Middleware, Next } from 'koa';
import { tracingEnabled } from './setup.ts';
import { tracer } from './tracer.ts';

/** A request's server span, with the context its handlers run in. */
export interface ServerSpan {
  /** The trace id when the span is sampled (recorded and exported), else undefined. */
  readonly sampledTraceId: string | undefined;
  /** Runs `work` with this span active, so statements, calls and log lines below are its children. */
  run<T>(work: () => T): T;
  /** Names the span after the route pattern, records the status and ends it. */
  end(route: string, status: number): void;
}

/**
 * A request sampled out runs without a span context (ADR 0130, amended): entering one cost every
 * request an AsyncLocalStorage run and every promise below it a propagation, for spans the
 * parent-based sampler would drop. Its statements and calls make none (requireParent* options),
 * and its span, which records nothing, is neither named nor ended.
 */
const SAMPLED_OUT: ServerSpan = { sampledTraceId: undefined, run: (work) => work(), end: () => undefined };

/** The headers the registered propagators read (OTEL_PROPAGATORS), asked at the first request: tracing has started by then. */
let propagatorFields: readonly string[] | undefined;

/**
 * Starts the server span of a request, continuing the trace of an incoming traceparent (through
 * the propagators of OTEL_PROPAGATORS). Only the method, the route pattern, the scheme, the
 * protocol and the status are recorded: never the path's values, the query, a header or a body.
 */
export function startServerSpan(req: IncomingMessage, method: string): ServerSpan {
  const active = context.active();
  // A request without any header the propagators read has nothing to extract.
  propagatorFields ??= propagation.fields();
  const parent = propagatorFields.some((field) => req.headers[field] !== undefined) ? propagation.extract(active, req.headers) : active;
  // No attributes at the start: the samplers OTEL_TRACES_SAMPLER names decide on the trace id alone,
  // and a request sampled out (most of them) then builds none (bench/README.md, issue 34).
  const span: Span = tracer.startSpan(method, { kind: SpanKind.SERVER }, parent);
  if (!span.isRecording()) {
    return SAMPLED_OUT;
  }
  span.setAttributes({
    'http.request.method': method,
    'url.scheme': 'encrypted' in req.socket && req.socket.encrypted ? 'https' : 'http',
    'network.protocol.version': req.httpVersion,
  });
  const spanContext = span.spanContext();
  const sampled = (spanContext.traceFlags & TraceFlags.SAMPLED) !== 0;
  return {
    sampledTraceId: sampled ? spanContext.traceId : undefined,
    run: (work) => context.with(trace.setSpan(parent, span), work),
    end(route, status) {
      span.updateName(`${method} ${route}`);
      span.setAttribute('http.route', route);
      span.setAttribute('http.response.status_code', status);
      if (status >= 500) {
        span.setStatus({ code: SpanStatusCode.ERROR });
        span.setAttribute('error.type', String(status));
      }
      span.end();
    },
  };
}

type HandleRequest = (ctx: KoaContext, next: Next, span?: ServerSpan) => Promise<void>;

/** The request frame's middleware with a server span around each request; undefined while tracing is off. */
export function traceRequests(handleRequest: HandleRequest): Middleware | undefined {
  if (!tracingEnabled()) {
    return undefined;
  }
  return (ctx, next) => {
    const span = startServerSpan(ctx.req, ctx.method);
    return span.run(() => handleRequest(ctx, next, span));
  };
}
