/** One field-level validation issue; never carries the submitted value. */
export interface FieldIssue {
  /** Where the field is: `body.title`, `query.before`, `params.id`. */
  location: string;
  /** What is wrong with it, in words a client can show. */
  message: string;
}

/**
 * Base of every error the product throws on purpose. `code` is public API (add, never rename);
 * the HTTP status lives in the module's status table, not here, so modules know nothing of HTTP.
 */
export class AppError extends Error {
  /** The problem code answered to the client (`note_not_found`); its module's `statuses` give its HTTP status. */
  readonly code: string;
  /** The fields at fault, answered with `validation_failed`. */
  readonly issues: FieldIssue[] | undefined;
  /** Headers answered with the problem (Retry-After, Allow). */
  readonly headers: Record<string, string> | undefined;

  /** `cause` is logged, never answered; `issues` and `headers` go with the answer. */
  constructor(code: string, message: string, options: { cause?: unknown; issues?: FieldIssue[]; headers?: Record<string, string> } = {}) {
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

/** The same error answered with more headers (a route's own headers that must reach a refusal too). */
export function withHeaders(error: unknown, headers: Record<string, string>): unknown {
  if (!(error instanceof AppError)) {
    return error;
  }
  return Object.create(Object.getPrototypeOf(error) as object, {
    ...Object.getOwnPropertyDescriptors(error),
    headers: { value: { ...headers, ...error.headers }, enumerable: true },
  }) as AppError;
}

/** 400 validation_failed: fields of the input break their rules (the request's, or a command's). */
export const validationFailed = (issues: FieldIssue[]) => new AppError('validation_failed', 'The request has invalid fields.', { issues });
