import type { z } from 'zod';
import type { RegisteredJob } from './definitions.ts';
import { effectiveSchedule } from './scheduler.ts';
import type { Definition, DefinitionHistoryEntry, Run } from './schemas.ts';
import type { DefinitionHistoryRow, DefinitionRow } from './store/definitions.ts';
import type { RunRow } from './store/reads.ts';

const iso = (date: Date | null) => date?.toISOString() ?? null;
const durationMs = (started: Date | null, finished: Date | null) => (started && finished ? Math.max(0, finished.getTime() - started.getTime()) : null);

/** The configuration in force: the operator's overrides over the code's values. */
export function effectiveConfig(job: RegisteredJob, row: Pick<DefinitionRow, 'enabled' | 'schedule'>) {
  return { enabled: row.enabled ?? job.enabled, schedule: effectiveSchedule(job, row.schedule).text };
}

export function definitionView(job: RegisteredJob, row: DefinitionRow): z.infer<typeof Definition> {
  let invalidOverride = false;
  const schedule = effectiveSchedule(job, row.schedule, () => (invalidOverride = true));
  const enabled = row.enabled ?? job.enabled;
  return {
    name: job.name,
    description: job.description,
    queue: job.queue,
    timeout_seconds: job.timeoutSeconds,
    max_attempts: job.maxAttempts,
    enabled,
    schedule: schedule.text,
    defaults: { enabled: job.enabled, schedule: job.schedule.text },
    modified: row.enabled !== null || row.schedule !== null,
    invalid_override: invalidOverride,
    min_interval_seconds: job.minIntervalSeconds,
    version: row.version,
    updated_at: iso(row.updated_at),
    updated_by: row.updated_by,
    next_run_at: enabled ? iso(schedule.nextSlot(row.db_now) ?? null) : null,
  };
}

export function definitionHistoryView(row: DefinitionHistoryRow): z.infer<typeof DefinitionHistoryEntry> {
  return {
    id: row.id,
    job: row.job,
    version: row.version,
    before: row.old_config,
    after: row.new_config,
    reason: row.reason,
    actor: { id: row.actor_id, label: row.actor_label },
    request_id: row.request_id,
    changed_at: row.changed_at.toISOString(),
  };
}

export function runView(row: RunRow): z.infer<typeof Run> {
  return {
    id: row.id,
    job: row.job,
    trigger: row.trigger,
    slot: iso(row.slot),
    queue: row.queue,
    state: row.state,
    attempts: row.attempts,
    max_attempts: row.max_attempts,
    run_after: row.run_after.toISOString(),
    lease_expires_at: iso(row.lease_expires_at),
    instance_id: row.instance_id,
    requested_by: row.requested_by,
    error: row.error,
    created_at: row.created_at.toISOString(),
    started_at: iso(row.started_at),
    finished_at: iso(row.finished_at),
    duration_ms: durationMs(row.started_at, row.finished_at),
  };
}

export { durationMs, iso };
