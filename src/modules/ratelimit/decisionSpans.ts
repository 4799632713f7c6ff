import { type Link, type Span, type SpanContext, ROOT_CONTEXT, SpanStatusCode, TraceFlags, context, trace } from '@opentelemetry/api';
import { tracer } from '../../platform/tracing/tracer.ts';
import type { Decision } from './rules.ts';

/** A waiting request's `ratelimit decide` span as a batch carries it to the pod's primary: `<trace id>-<span id>`, sampled. */
export type WaitingSpan = string;

const WAITING_SPAN = /^([0-9a-f]{32})-([0-9a-f]{16})$/;
/** Past this many, a batch span names no more waiting requests (the SDK's own default cap on links). */
const MAX_LINKS = 128;

/**
 * The request's wait for a shared decision, as its child span; nothing at all (no span, no
 * allocation) unless the request's span is sampled, so tracing off costs one context lookup.
 */
export function startDecisionSpan(limiter: string): Span | undefined {
  const request = trace.getActiveSpan();
  if (request === undefined || (request.spanContext().traceFlags & TraceFlags.SAMPLED) === 0) {
    return undefined;
  }
  return tracer.startSpan('ratelimit decide', { attributes: { 'ratelimit.limiter': limiter } });
}

export function endDecisionSpan(span: Span, decision: Decision): void {
  span.setAttributes({ 'ratelimit.allowed': decision.allowed, 'ratelimit.source': decision.source });
  span.end();
}

/** What a pod message carries of the waiting spans: their ids, no more (about 50 bytes each). */
export const waitingSpans = (waiting: readonly SpanContext[]): WaitingSpan[] => waiting.map((span) => `${span.traceId}-${span.spanId}`);

/** Links to the waiting requests' spans, as received from an instance; what does not parse is left out (a batch is never refused for it). */
export function receivedLinks(waiting: readonly unknown[]): Link[] {
  const links: Link[] = [];
  for (const value of waiting) {
    const parts = typeof value === 'string' ? WAITING_SPAN.exec(value) : null;
    if (parts && links.length < MAX_LINKS) {
      const linked: SpanContext = { traceId: parts[1]!, spanId: parts[2]!, traceFlags: TraceFlags.SAMPLED, isRemote: true };
      links.push({ context: linked });
    }
  }
  return links;
}

/**
 * One statement deciding a batch of `limiter`'s keys, as a root span (it serves many requests, of
 * many traces) linked to the requests that waited on it. It names the limiter and counts keys,
 * never their values: keys are made of emails and addresses.
 */
export function decideBatchTraced<T>(limiter: string, keys: number, links: Link[], decide: () => Promise<T>, batches?: number): Promise<T> {
  const span = tracer.startSpan('ratelimit decide batch', {
    root: true,
    links,
    attributes: { 'ratelimit.limiter': limiter, 'ratelimit.keys': keys, ...(batches === undefined ? {} : { 'ratelimit.batches': batches }) },
  });
  return context.with(trace.setSpan(ROOT_CONTEXT, span), decide).then(
    (result) => {
      span.end();
      return result;
    },
    (error: unknown) => {
      // The SQLSTATE, not the driver's text, which can quote data.
      const code = (error as { code?: unknown } | null)?.code;
      span.setStatus({ code: SpanStatusCode.ERROR, message: typeof code === 'string' ? code : error instanceof Error ? error.name : 'Error' });
      span.end();
      throw error;
    },
  );
}
