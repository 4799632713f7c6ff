import { AppError, type StatusTable } from '../../platform/errors.ts';

export const auditStatuses = {
  audit_query_timeout: 503,
} as const satisfies StatusTable;

export type AuditErrorCode = keyof typeof auditStatuses;

export class AuditError extends AppError {
  declare readonly code: AuditErrorCode;
  constructor(code: AuditErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(code, message, options);
  }
}
