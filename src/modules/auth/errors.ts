import { AppError, type FieldIssue, type StatusTable } from '../../platform/errors.ts';

export const authStatuses = {
  account_exists: 409,
  account_not_found: 404,
  role_exists: 409,
  role_not_found: 404,
  role_builtin: 409,
  role_version_conflict: 409,
  permission_not_held: 403,
  unknown_permission: 422,
  invalid_role_name: 422,
  invalid_email: 422,
  invalid_credentials: 401,
  invalid_challenge: 401,
  invalid_mfa: 401,
  invalid_refresh_token: 401,
  invalid_code: 422,
  mfa_already_enabled: 409,
  mfa_not_enabled: 409,
  mfa_setup_not_started: 409,
  account_locked: 403,
  accounts_query_timeout: 503,
} as const satisfies StatusTable;

export type AuthErrorCode = keyof typeof authStatuses;

export class AuthError extends AppError {
  declare readonly code: AuthErrorCode;
  constructor(code: AuthErrorCode, message: string, options: { cause?: unknown; issues?: FieldIssue[] } = {}) {
    super(code, message, options);
  }
}

/** A token whose account was deleted meanwhile (a foreign key found no account): as if signed out. */
export const accountEnded = (cause: unknown) =>
  new AppError('unauthenticated', 'The account of this token no longer exists.', { cause, headers: { 'WWW-Authenticate': 'Bearer' } });
