import { ROOT_CONTEXT, SpanStatusCode, TraceFlags, context, propagation, trace } from '@opentelemetry/api';
import { tracer } from '../tracing/tracer.ts';
import type { ThreadReply } from './thread.ts';

/** The submitting context as the configured propagators write it (W3C `traceparent` by default). */
export type TaskCarrier = Record<string, string>;

/**
 * The carrier a task takes to its thread: only from inside a sampled span, so an untraced task
 * (and every task while tracing is off) posts exactly what it did before.
 */
export function submittingContext(): TaskCarrier | undefined {
  const span = trace.getActiveSpan();
  if (span === undefined || (span.spanContext().traceFlags & TraceFlags.SAMPLED) === 0) {
    return undefined;
  }
  const carrier: TaskCarrier = {};
  propagation.inject(context.active(), carrier);
  return Object.keys(carrier).length > 0 ? carrier : undefined;
}

/**
 * Runs a task on its thread in a `task <name>` span, the child of the span that submitted it;
 * without a carrier, as before, with no span.
 */
export function runTraced(name: string, carrier: TaskCarrier | undefined, run: () => Promise<ThreadReply>): Promise<ThreadReply> {
  if (carrier === undefined) {
    return run();
  }
  const parent = propagation.extract(ROOT_CONTEXT, carrier);
  return tracer.startActiveSpan(`task ${name}`, { attributes: { 'task.name': name } }, parent, async (span) => {
    try {
      const reply = await run();
      if (!reply.ok) {
        span.setAttribute('task.error_code', reply.error.code);
        span.setStatus({ code: SpanStatusCode.ERROR, message: reply.error.code });
      }
      return reply;
    } finally {
      span.end();
    }
  });
}
