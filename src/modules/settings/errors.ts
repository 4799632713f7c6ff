import { AppError, type FieldIssue, type StatusTable } from '../../platform/errors.ts';

export const settingsStatuses = {
  setting_not_found: 404,
  setting_version_conflict: 409,
  setting_reason_required: 422,
  invalid_setting_value: 422,
} as const satisfies StatusTable;

export type SettingsErrorCode = keyof typeof settingsStatuses;

export class SettingsError extends AppError {
  declare readonly code: SettingsErrorCode;
  constructor(code: SettingsErrorCode, message: string, options: { issues?: FieldIssue[] } = {}) {
    super(code, message, options);
  }
}

export const settingNotFound = (name: string) => new SettingsError('setting_not_found', `There is no setting named ${name}.`);
