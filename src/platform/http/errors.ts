/** One field-level validation issue; never carries the submitted value. */
export interface FieldIssue {
  location: string;
  message: string;
}

/**
 * Base of every error the product throws on purpose. `code` is public API (add, never rename);
 * the HTTP status lives in the module's status table, not here, so modules know nothing of HTTP.
 */
export class AppError extends Error {
  readonly code: string;
  readonly issues: FieldIssue[] | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(
    code: string,
    message: string,
    options: { cause?: unknown; issues?: FieldIssue[]; headers?: Record<string, string> } = {},
  ) {
    // An AppError is an answer (404, 429, ...), never logged with a stack: capturing one cost more
    // than the rest of a refused request.
    const depth = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      super(message, { cause: options.cause });
    } finally {
      Error.stackTraceLimit = depth;
    }
    this.name = new.target.name;
    this.code = code;
    this.issues = options.issues;
    this.headers = options.headers;
  }
}

/** code → HTTP status, one table per module; `src/app/` merges them once at start-up. */
export type StatusTable = Readonly<Record<string, number>>;

/** The platform's own codes (RFC 9457 fallbacks and request-shape errors). */
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
} as const satisfies StatusTable;

export const notFound = (detail: string) => new AppError('not_found', detail);
export const methodNotAllowed = (detail: string, allow: string) =>
  new AppError('method_not_allowed', detail, { headers: { Allow: allow } });
export const validationFailed = (issues: FieldIssue[]) =>
  new AppError('validation_failed', 'The request has invalid fields.', { issues });
export const unauthenticated = (detail = 'A valid bearer token is required.') =>
  new AppError('unauthenticated', detail, { headers: { 'WWW-Authenticate': 'Bearer' } });
export const forbidden = (detail = 'The account lacks the permission this operation needs.') =>
  new AppError('forbidden', detail);
