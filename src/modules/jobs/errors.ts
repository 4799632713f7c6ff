import { AppError, type StatusTable } from '../../platform/errors.ts';

export const jobsStatuses = {
  job_not_found: 404,
  job_run_not_found: 404,
  job_run_not_failed: 409,
  job_reason_required: 422,
  invalid_job_schedule: 422,
  job_definition_disabled: 409,
  job_definition_version_conflict: 409,
  job_run_limited: 429,
  jobs_query_timeout: 503,
} as const satisfies StatusTable;

export type JobsErrorCode = keyof typeof jobsStatuses;

export class JobsError extends AppError {
  declare readonly code: JobsErrorCode;
  constructor(code: JobsErrorCode, message: string, options: { cause?: unknown; headers?: Record<string, string> } = {}) {
    super(code, message, options);
  }
}

export const jobNotFound = (job: string) => new JobsError('job_not_found', `No job is defined with the name ${job}.`);
