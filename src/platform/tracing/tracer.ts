import { trace } from '@opentelemetry/api';

/**
 * The one tracer every module makes spans with. Until the tracing set-up registers an SDK (only
 * when an OTLP endpoint is configured), the API hands out no-op spans: tracing off costs a call.
 */
export const tracer = trace.getTracer('backplane');
