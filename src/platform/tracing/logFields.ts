import { TraceFlags, trace } from '@opentelemetry/api';

/**
 * The pino mixin that leads a log line to its trace: `trace_id` and `span_id` of the sampled span
 * active where the line is written. Fresh object each call (pino merges the line into it); with
 * tracing off no span is ever active, so this is a lookup and an empty object.
 */
export function traceFields(): Record<string, string> {
  const span = trace.getActiveSpan();
  if (!span) {
    return {};
  }
  const { traceId, spanId, traceFlags } = span.spanContext();
  return traceFlags & TraceFlags.SAMPLED ? { trace_id: traceId, span_id: spanId } : {};
}
