import { AppError, type StatusTable } from '../../platform/errors.ts';

export const identitiesStatuses = {
  provider_not_found: 404,
  identity_not_found: 404,
  account_not_found: 404,
  invalid_state: 401,
  session_ended: 401,
  provider_sign_in_failed: 401,
  provider_email_required: 403,
  identity_in_use: 409,
  provider_already_linked: 409,
  provider_link_required: 409,
  last_sign_in_method: 409,
  provider_unavailable: 503,
} as const satisfies StatusTable;

export type IdentityErrorCode = keyof typeof identitiesStatuses;

export class IdentityError extends AppError {
  declare readonly code: IdentityErrorCode;
  constructor(code: IdentityErrorCode, message: string, options: { cause?: unknown; headers?: Record<string, string> } = {}) {
    super(code, message, options);
  }
}
