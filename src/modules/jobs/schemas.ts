import { z } from 'zod';
import { JOB_NAME } from './definitions.ts';
import { MAX_SCHEDULE_LENGTH } from './schedule.ts';
import { RUN_STATES } from './store/reads.ts';
import { PageCursor, PageLimit } from '../../platform/http/paging.ts';
import { timestamp } from '../../platform/http/schemas.ts';

const int = () => z.number().int();
const RunState = z.enum(RUN_STATES);

export const JobName = z.string().regex(JOB_NAME, 'must be a job name: lowercase letters, digits and _');
export const JobParams = z.object({ job: JobName.meta({ examples: ['retention'] }) });

export const Run = z.object({
  id: z.string(),
  job: z.string(),
  trigger: z.enum(['schedule', 'manual']).describe('schedule: a slot of the schedule; manual: asked for through the run endpoint'),
  slot: timestamp().nullable().describe('The scheduled instant; null for a manual run'),
  queue: z.string(),
  state: RunState,
  attempts: int(),
  max_attempts: int(),
  run_after: timestamp().describe('When a queued run becomes due (later than now while it waits to retry)'),
  lease_expires_at: timestamp().nullable().describe('While running: when another instance may take the run over'),
  instance_id: z.string().nullable().describe('The instance that ran the latest attempt'),
  requested_by: z.string().nullable().describe('Account id that asked for a manual run'),
  error: z.string().nullable().describe('Summary of the latest failed attempt: a code and a short message'),
  created_at: timestamp(),
  started_at: timestamp().nullable().describe('Start of the latest attempt'),
  finished_at: timestamp().nullable(),
  duration_ms: int().nullable(),
});

export const RunPage = z.object({ runs: z.array(Run), next_cursor: z.string().optional() });

export const RunsQuery = z.strictObject({
  job: JobName.optional(),
  state: RunState.optional(),
  limit: PageLimit(200),
  cursor: PageCursor.optional(),
});

const Config = z.object({ enabled: z.boolean(), schedule: z.string() });

export const Definition = z.object({
  name: z.string(),
  description: z.string(),
  queue: z.string(),
  timeout_seconds: int(),
  max_attempts: int(),
  enabled: z.boolean(),
  schedule: z.string().describe('5-field cron in UTC, a descriptor such as @hourly, or @every Ns|Nm|Nh'),
  defaults: Config.describe('The values in code, in force where no operator override exists'),
  modified: z.boolean().describe('True when an operator override is in force'),
  invalid_override: z
    .boolean()
    .describe('True when a stored schedule no longer parses, or runs more often than min_interval_seconds, and the code schedule is used'),
  min_interval_seconds: int().describe('The shortest time between two runs this job allows; a schedule that runs more often is refused'),
  version: int().describe('0 until the first change; send it back with a change to detect concurrent writes'),
  updated_at: timestamp().nullable(),
  updated_by: z.string().nullable(),
  next_run_at: timestamp().nullable().describe('Next slot of the schedule; null while disabled'),
});

export const DefinitionList = z.object({ definitions: z.array(Definition) });

export const DefinitionChange = z
  .strictObject({
    enabled: z.boolean().nullable().optional().describe('false disables the job: its running run finishes, no new slots run; null returns to the code default'),
    schedule: z.string().max(MAX_SCHEDULE_LENGTH).nullable().optional().describe('null returns to the code default'),
    reason: z.string().max(500).optional().describe('Why; required'),
    version: int().min(0).optional().describe('The version last read; a different current version is 409 `job_definition_version_conflict`'),
  })
  .refine((body) => body.enabled !== undefined || body.schedule !== undefined, { message: 'must carry enabled or schedule' });

export const HistoryQuery = z.strictObject({
  before: PageCursor.optional(),
  limit: PageLimit(100),
});

export const DefinitionHistoryEntry = z.object({
  id: z.string(),
  job: z.string(),
  version: int().describe('The version the change made'),
  before: Config,
  after: Config,
  reason: z.string(),
  actor: z.object({ id: z.string().nullable(), label: z.string().nullable() }),
  request_id: z.string().nullable(),
  changed_at: timestamp(),
});

export const DefinitionHistoryPage = z.object({ changes: z.array(DefinitionHistoryEntry), next_cursor: z.string().optional() });

const LastRun = z.object({
  id: z.string(),
  trigger: z.enum(['schedule', 'manual']),
  state: RunState,
  attempts: int(),
  instance_id: z.string().nullable(),
  started_at: timestamp(),
  finished_at: timestamp().nullable(),
  duration_ms: int().nullable(),
  error: z.string().nullable(),
});

const OverviewJob = z.object({
  name: z.string(),
  queue: z.string(),
  enabled: z.boolean(),
  schedule: z.string(),
  next_run_at: timestamp().nullable(),
  last_run: LastRun.nullable().describe('The newest run that has started'),
  last_24h: z.object({ queued: int(), running: int(), succeeded: int(), failed: int() }).describe('Runs created in the last 24 hours, by state'),
  backlog: z
    .object({
      depth: int().describe('Items waiting, due or not'),
      due: int().describe('Items whose time has come and that no run holds'),
      in_progress: int().describe('Items a run holds right now'),
      oldest_due_at: timestamp().nullable().describe('When the longest-waiting due item became due'),
      last_24h: z.record(z.string(), int()).describe('Outcomes over the last 24 hours, by name'),
    })
    .optional()
    .describe('Only for a job that drains a queue of its own (auth_revoke_tokens: tokens to revoke)'),
});

export const Overview = z.object({
  generated_at: timestamp().describe('Database clock'),
  jobs: z.array(OverviewJob),
  queues: z.array(
    z.object({
      name: z.string(),
      instances: z.array(z.string()).describe('Ids of running instances whose workers consume the queue'),
      workers: int().describe('Job workers of those instances'),
      running: int(),
      queued: int(),
    }),
  ),
  failing: z.array(OverviewJob).describe('Jobs whose last run failed'),
});

export const RunParams = z.object({
  id: z
    .string()
    .regex(/^\d{1,18}$/, 'must be a run id')
    .meta({ examples: ['42'] }),
});

export const Attempt = z.object({
  attempt: int().describe('1 for the first attempt'),
  instance_id: z.string().describe('The instance that ran it'),
  started_at: timestamp(),
  finished_at: timestamp().nullable().describe('Null while it runs'),
  duration_ms: int().nullable(),
  outcome: z.enum(['succeeded', 'failed', 'lost']).nullable().describe('lost: its instance stopped renewing the lease; null while it runs'),
  error: z.string().nullable().describe('A code and a short message, for a failed or lost attempt'),
});

export const RunDetail = z.object({
  run: Run,
  attempts: z.array(Attempt).describe('First to last; an attempt released by a stopping instance is not listed (it did not count)'),
});

export const RetryRequest = z.strictObject({ reason: z.string().max(500).optional().describe('Why; required') });
