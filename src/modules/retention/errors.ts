import { AppError, type StatusTable } from '../../platform/errors.ts';

export const retentionStatuses = {
  retention_query_timeout: 503,
} as const satisfies StatusTable;

export type RetentionErrorCode = keyof typeof retentionStatuses;

export class RetentionError extends AppError {
  declare readonly code: RetentionErrorCode;
  constructor(code: RetentionErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(code, message, options);
  }
}

/** A run in which some kinds failed after every kind had its turn; the run's error summary names them. */
export class RetentionRunError extends Error {
  override readonly name = 'RetentionRunError';
  readonly code = 'retention_failed';
  constructor(failures: string[], kinds: number) {
    super(`${failures.length} of ${kinds} steps failed: ${failures.join(', ')}; the others completed`);
  }
}
