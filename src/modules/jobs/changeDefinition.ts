import type { z } from 'zod';
import { withTransaction } from '../../platform/db/transaction.ts';
import type { ChangedBy } from '../../platform/caller.ts';
import { JobsError, jobNotFound } from './errors.ts';
import type { JobsServiceDeps } from './ports.ts';
import { parseJobSchedule } from './scheduleFloor.ts';
import type { Definition, DefinitionChange } from './schemas.ts';
import { insertDefinitionHistory, lockDefinition, notifyDefinitionChanged, updateDefinition } from './store/definitions.ts';
import { definitionView, effectiveConfig } from './views.ts';

/** The stored override after a change: absent keeps it, null or the code's own value removes it. */
function nextOverride<T>(requested: T | null | undefined, stored: T | null, codeValue: T): T | null {
  if (requested === undefined) {
    return stored;
  }
  return requested === null || requested === codeValue ? null : requested;
}

/**
 * Changes a job's enabled flag or schedule with a reason: one history row, the audit event and a
 * notification every instance's scheduler follows, all in one transaction. A change that alters
 * nothing records nothing. With `version`, a change made meanwhile by someone else is a conflict.
 */
export async function changeDefinition(
  deps: JobsServiceDeps,
  name: string,
  change: z.infer<typeof DefinitionChange>,
  by: ChangedBy,
): Promise<z.infer<typeof Definition>> {
  const job = deps.jobs.get(name);
  if (!job) {
    throw jobNotFound(name);
  }
  const reason = change.reason?.trim();
  if (!reason) {
    throw new JobsError('job_reason_required', 'A reason is required to change a job definition.');
  }
  if (typeof change.schedule === 'string') {
    parseJobSchedule(job, change.schedule);
  }
  return withTransaction(deps.pool, async (tx) => {
    const row = await lockDefinition(tx, job.name);
    if (change.version !== undefined && change.version !== row.version) {
      throw new JobsError('job_definition_version_conflict', `${job.name} is at version ${row.version}, not ${change.version}: read it again and retry.`);
    }
    const enabled = nextOverride(change.enabled, row.enabled, job.enabled);
    const schedule = nextOverride(change.schedule, row.schedule, job.schedule.text);
    if (enabled === row.enabled && schedule === row.schedule) {
      return definitionView(job, row);
    }
    const before = effectiveConfig(job, row);
    const after = effectiveConfig(job, { enabled, schedule });
    const updated = await updateDefinition(tx, {
      name: job.name,
      enabled,
      schedule,
      restartSlots: (after.enabled && !before.enabled) || after.schedule !== before.schedule,
      updatedBy: by.actor.label,
    });
    await insertDefinitionHistory(tx, {
      job: job.name,
      version: updated.version,
      before,
      after,
      reason,
      actorId: by.actor.id,
      actorLabel: by.actor.label,
      requestId: by.requestId ?? null,
      clientAddress: by.clientAddress ?? null,
      userAgent: by.userAgent ?? null,
    });
    await notifyDefinitionChanged(tx, job.name);
    await deps.recordAudit(tx, {
      actor: by.actor,
      action: 'jobs.definition.changed',
      resource: { type: 'job_definition', id: job.name },
      outcome: 'success',
      requestId: by.requestId,
      clientAddress: by.clientAddress,
      userAgent: by.userAgent,
      metadata: { before, after, reason },
    });
    return definitionView(job, updated);
  });
}
