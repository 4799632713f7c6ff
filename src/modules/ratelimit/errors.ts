import { AppError, type StatusTable } from '../../platform/errors.ts';
import { refusalHeaders, retryAfterSeconds } from './headers.ts';
import type { Decision } from './rules.ts';

export const rateLimitStatuses = {
  rate_limited: 429,
  too_many_attempts: 429,
  ratelimit_subject_invalid: 400,
  ratelimit_reason_required: 422,
} as const satisfies StatusTable;

export type RateLimitErrorCode = keyof typeof rateLimitStatuses;

/** A refusal: carries Retry-After and the RateLimit fields of the policy that refused. */
export class RateLimitError extends AppError {
  declare readonly code: RateLimitErrorCode;
  readonly decision: Decision;

  constructor(code: RateLimitErrorCode, message: string, policy: string, decision: Decision) {
    super(code, message, { headers: refusalHeaders(policy, decision) });
    this.decision = decision;
  }
}

export const rateLimited = (policy: string, decision: Decision) =>
  new RateLimitError('rate_limited', `Too many requests from this client address; retry in ${retryAfterSeconds(decision)} s.`, policy, decision);

export const tooManyAttempts = (policy: string, decision: Decision) =>
  new RateLimitError('too_many_attempts', `Too many attempts; retry in ${retryAfterSeconds(decision)} s.`, policy, decision);
