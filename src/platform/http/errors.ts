import { AppError, type StatusTable } from '../errors.ts';

/** A code any route may answer with, whatever its module declares: the platform's own (RFC 9457 fallbacks and request-shape errors). */
export type PlatformProblemCode =
  | 'bad_request'
  | 'invalid_json'
  | 'unauthenticated'
  | 'forbidden'
  | 'mfa_required'
  | 'not_found'
  | 'method_not_allowed'
  | 'request_timeout'
  | 'conflict'
  | 'request_too_large'
  | 'unsupported_media_type'
  | 'unsupported_content_encoding'
  | 'validation_failed'
  | 'rate_limited'
  | 'request_header_too_large'
  | 'internal_error'
  | 'unavailable'
  | 'database_unavailable';

/** The platform's own codes and their status; the type above lists the same codes, as the compiler checks. */
export const platformStatuses = {
  bad_request: 400,
  invalid_json: 400,
  unauthenticated: 401,
  forbidden: 403,
  mfa_required: 403,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  conflict: 409,
  request_too_large: 413,
  unsupported_media_type: 415,
  unsupported_content_encoding: 415,
  validation_failed: 422,
  rate_limited: 429,
  request_header_too_large: 431,
  internal_error: 500,
  unavailable: 503,
  database_unavailable: 503,
} as const satisfies StatusTable & Record<PlatformProblemCode, number>;

export const notFound = (detail: string) => new AppError('not_found', detail);
export const methodNotAllowed = (detail: string, allow: string) => new AppError('method_not_allowed', detail, { headers: { Allow: allow } });
// Raised by use cases too (settings): defined in platform/errors.ts, beside AppError.
export { validationFailed } from '../errors.ts';
export const unauthenticated = (detail = 'A valid bearer token is required.') =>
  new AppError('unauthenticated', detail, { headers: { 'WWW-Authenticate': 'Bearer' } });
export const forbidden = (detail = 'The account lacks the permission this operation needs.') => new AppError('forbidden', detail);
