import { recordAuditEvent } from '../modules/audit/index.ts';
import { type JobDefinition, type RecordJobDefinitionChange, defineJob } from '../modules/jobs/index.ts';
import { cleanupRateLimitBuckets } from '../modules/ratelimit/index.ts';
import type { Config } from './config.ts';
import { testJobDefinitions } from './testJobs.ts';

/** Hourly: buckets that are full again carry no state worth keeping. */
export const ratelimitCleanupJob = defineJob({
  name: 'ratelimit_cleanup',
  description: 'Deletes rate-limit buckets that are full again, in batches',
  schedule: '0 * * * *',
  timeoutSeconds: 600,
  maxAttempts: 3,
  handler: async ({ db, logger }) => {
    const deleted = await cleanupRateLimitBuckets(db);
    logger.info({ job: 'ratelimit_cleanup', deleted }, 'rate-limit buckets cleaned');
  },
});

/** Every job of the product: each module contributes its definitions here. */
export function jobDefinitions(config: Config): JobDefinition[] {
  return [ratelimitCleanupJob, ...(config.testJobs ? testJobDefinitions() : [])];
}

/** A definition change becomes the audit event `jobs.definition.changed`, in the change's transaction. */
export function auditJobDefinitionChanges(): RecordJobDefinitionChange {
  return async (tx, event) => {
    await recordAuditEvent(tx, {
      actor: event.actor ? { kind: event.actor.kind, id: event.actor.id, label: event.actor.label } : { kind: 'anonymous' },
      action: 'jobs.definition.changed',
      resource: { type: 'job_definition', id: event.job },
      outcome: 'success',
      requestId: event.requestId,
      clientAddress: event.clientAddress,
      userAgent: event.userAgent,
      metadata: { before: event.before, after: event.after, reason: event.reason },
    });
  };
}
