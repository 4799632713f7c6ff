import { AppError, type FieldIssue, type StatusTable } from '../../../platform/errors.ts';

/** The queue's error codes and their HTTP status; merged into the module's table when it is wired. */
export const queueStatuses = {
  invalid_job_payload: 422,
  job_payload_too_large: 413,
  unknown_job_task: 422,
  invalid_job_options: 422,
  job_not_retryable: 409,
} as const satisfies StatusTable;

export type QueueErrorCode = keyof typeof queueStatuses;

export class QueueError extends AppError {
  declare readonly code: QueueErrorCode;
  constructor(code: QueueErrorCode, message: string, options: { issues?: FieldIssue[] } = {}) {
    super(code, message, options);
  }
}

/**
 * Thrown by a handler: the job runs again after `seconds` (at least 1) without spending an
 * attempt, e.g. while the service it calls asks to wait.
 */
export class RetryJobLater extends Error {
  override readonly name = 'RetryJobLater';
  readonly seconds: number;
  constructor(seconds: number, reason = 'the handler asked to run again later') {
    super(reason);
    this.seconds = Math.max(1, Math.ceil(seconds));
  }
}

/** Thrown by a handler: the job is discarded at once, whatever attempts remain (e.g. its subject no longer exists). */
export class GiveUpJob extends Error {
  override readonly name = 'GiveUpJob';
  constructor(reason: string) {
    super(reason);
  }
}

/** Why an attempt stopped: an operator cancelled the job. */
export class JobCancelledError extends Error {
  override readonly name = 'JobCancelledError';
  constructor() {
    super('the job was cancelled while it ran');
  }
}
