import { STATUS_CODES } from 'node:http';
import type { Context } from 'koa';
import type { Logger } from 'pino';
import { AppError, type FieldIssue, type StatusTable } from '../errors.ts';

export interface Problem {
  type?: string;
  title: string;
  status: number;
  code: string;
  detail?: string;
  errors?: FieldIssue[];
  request_id?: string;
}

const CODE_PATTERN = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/;

/** Merges module status tables, refusing bad codes and a code mapped to two statuses. */
export function mergeStatusTables(tables: StatusTable[]): Map<string, number> {
  const merged = new Map<string, number>();
  for (const table of tables) {
    for (const [code, status] of Object.entries(table)) {
      if (!CODE_PATTERN.test(code)) {
        throw new Error(`error code ${code} is not snake_case`);
      }
      if (status < 400 || status > 599) {
        throw new Error(`error code ${code} maps to ${status}, not an error status`);
      }
      const known = merged.get(code);
      if (known !== undefined && known !== status) {
        throw new Error(`error code ${code} mapped to both ${known} and ${status}`);
      }
      merged.set(code, status);
    }
  }
  return merged;
}

export function renderProblem(ctx: Context, problem: Problem, headers: Record<string, string> = {}): void {
  ctx.status = problem.status;
  ctx.set('Cache-Control', 'no-store');
  for (const [name, value] of Object.entries(headers)) {
    ctx.set(name, value);
  }
  ctx.type = 'application/problem+json';
  ctx.body = problem;
}

/** A typed error as its problem and headers, or undefined when its code has no status (a bug). */
export function problemOf(
  statuses: Map<string, number>,
  error: unknown,
  requestId: string | undefined,
): { problem: Problem; headers?: Record<string, string> } | undefined {
  if (!(error instanceof AppError) || !statuses.has(error.code)) {
    return undefined;
  }
  const status = statuses.get(error.code)!;
  return {
    problem: {
      title: STATUS_CODES[status] ?? 'Error',
      status,
      code: error.code,
      detail: error.message,
      ...(error.issues ? { errors: error.issues } : {}),
      ...(requestId ? { request_id: requestId } : {}),
    },
    headers: error.headers,
  };
}

export interface OutageAnswer {
  /** Why an error means the database cannot be used now (a short word), or undefined. */
  reason(error: unknown): string | undefined;
  /** Retry-After of a 503 database_unavailable. */
  retryAfterSeconds: number;
  /** At most one warning per this many milliseconds; the access log has every answer. */
  warnEveryMs?: number;
}

/**
 * The one place errors become HTTP: typed errors by their code, a database outage as 503
 * database_unavailable, anything else a logged 500 whose text never reaches the client.
 */
export function problemRenderer(statuses: Map<string, number>, logger: Logger, outage?: OutageAnswer) {
  let lastWarnAt = -Infinity;
  let unwarned = 0;
  // An outage fails every request: one warning a while, without a stack, rather than an error per request.
  const warnOutage = (reason: string, requestId: string | undefined) => {
    const now = performance.now();
    if (now - lastWarnAt < (outage?.warnEveryMs ?? 60_000)) {
      unwarned += 1;
      return;
    }
    logger.warn({ reason, request_id: requestId, answered_since_last_warning: unwarned }, 'database unavailable: answering 503 database_unavailable');
    lastWarnAt = now;
    unwarned = 0;
  };

  return function renderError(ctx: Context, error: unknown): void {
    const requestId = ctx.state.requestId as string | undefined;
    const typed = problemOf(statuses, error, requestId);
    if (typed) {
      renderProblem(ctx, typed.problem, typed.headers);
      return;
    }
    const reason = outage?.reason(error);
    if (outage && reason) {
      warnOutage(reason, requestId);
      renderProblem(
        ctx,
        {
          title: STATUS_CODES[503]!,
          status: 503,
          code: 'database_unavailable',
          detail: 'The database is unavailable or did not answer in time; try again later.',
          ...(requestId ? { request_id: requestId } : {}),
        },
        { 'Retry-After': String(outage.retryAfterSeconds) },
      );
      return;
    }
    logger.error({ err: error, request_id: requestId }, 'unhandled error');
    renderProblem(ctx, {
      title: STATUS_CODES[500]!,
      status: 500,
      code: 'internal_error',
      detail: 'The server failed to handle the request; the request id is in the logs.',
      ...(requestId ? { request_id: requestId } : {}),
    });
  };
}
