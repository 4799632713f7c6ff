import { z } from 'zod';
import { timestamp } from '../../platform/http/schemas.ts';

const LastRun = z.object({
  id: z.string(),
  state: z.string().describe('queued, running, succeeded or failed'),
  started_at: timestamp(),
  finished_at: timestamp().nullable(),
  error: z.string().nullable().describe('The run’s error summary; a failed run names the kinds that failed'),
});

const KindEntry = z.object({
  kind: z.string().describe('audit_events, settings_history, job_definition_history, job_runs or release_instances'),
  setting: z.string().describe('The runtime setting holding the retention; change it with PUT /ops/settings/{name}'),
  value: z.string().describe('Its live value as a Go duration, such as 8760h'),
  value_seconds: z.number().int(),
  job: z.string().describe('The job that deletes the expired rows'),
  enabled: z.boolean().describe('Whether that job is enabled; disabled, it deletes nothing'),
  cutoff: timestamp().describe('Now on the database clock minus the retention: older rows are past it'),
  oldest: timestamp().nullable().describe('The oldest row retention judges; null when there is none'),
  past_cutoff: z.number().int().describe('Rows older than the cutoff now, which the next run deletes'),
  past_cutoff_estimated: z
    .boolean()
    .describe('True when past_cutoff includes whole expired months of audit events estimated from the catalogue; the boundary month is always counted'),
  deleted_unreported: z
    .number()
    .int()
    .describe(
      'Rows deleted by an attempt that stopped before recording their retention.purged event; the next attempt or run records them. 0 after a run that succeeded',
    ),
  last_run: LastRun.nullable(),
  next_run: z.string().nullable().describe('Null while the job is disabled'),
});

export const RetentionOverview = z.object({ kinds: z.array(KindEntry) });
