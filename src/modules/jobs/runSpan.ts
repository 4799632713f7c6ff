import { type Span, type Context, ROOT_CONTEXT, SpanStatusCode, trace } from '@opentelemetry/api';
import { tracer } from '../../platform/tracing/tracer.ts';
import type { RegisteredJob } from './definitions.ts';
import { summarizeError } from './errorSummary.ts';
import type { ClaimedRun } from './store/runs.ts';

/** How an attempt ended, as its span says: the metric's outcomes, `timed_out`, or `unrecorded` when the outcome could not be written. */
export type RunSpanOutcome = 'succeeded' | 'retrying' | 'failed' | 'timed_out' | 'lost' | 'released' | 'unrecorded';

export interface RunSpan {
  /** The context the attempt runs in: its statements, tasks and log lines belong to the run. */
  readonly context: Context;
  /** `willRetry` when the failure was recorded: whether the run is queued again. */
  end(outcome: RunSpanOutcome, error?: unknown, willRetry?: boolean): void;
}

/**
 * A root span per attempt (a job is no request's child; a manual run's request has its own
 * trace): `job <name>`, with the run's slot and attempt. Without an SDK it is the API's no-op span.
 */
export function startRunSpan(job: RegisteredJob, claimed: ClaimedRun): RunSpan {
  const span: Span = tracer.startSpan(`job ${job.name}`, {
    root: true,
    attributes: {
      'job.name': job.name,
      'job.run_id': claimed.id,
      'job.trigger': claimed.trigger,
      'job.attempt': claimed.attempts,
      'job.max_attempts': claimed.max_attempts,
      ...(claimed.slot ? { 'job.slot': claimed.slot.toISOString() } : {}),
    },
  });
  return {
    context: trace.setSpan(ROOT_CONTEXT, span),
    end(outcome, error, willRetry) {
      span.setAttribute('job.outcome', outcome);
      if (willRetry !== undefined) {
        span.setAttribute('job.will_retry', willRetry);
      }
      if (error !== undefined) {
        // The stored summary, not the error: driver text can quote data, and messages can hold credentials.
        const summary = summarizeError(error);
        span.recordException({ name: error instanceof Error ? error.name : 'Error', message: summary });
        span.setStatus({ code: SpanStatusCode.ERROR, message: summary });
      }
      span.end();
    },
  };
}
