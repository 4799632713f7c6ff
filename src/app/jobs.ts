import { foldAuditRollup, recordAuditEvent } from '../modules/audit/index.ts';
import type { RevocationSummary } from '../modules/identities/index.ts';
import { type JobBacklog, type JobDefinition, type RecordJobDefinitionChange, defineJob } from '../modules/jobs/index.ts';
import { cleanupRateLimitBuckets } from '../modules/ratelimit/index.ts';
import type { Queryable } from '../platform/db/pool.ts';
import type { Config } from './config.ts';
import { testJobDefinitions } from './testJobs.ts';

/** What the product's jobs call in their modules. */
export interface JobModules {
  /** Declared by the retention module with its dependencies. */
  retention: JobDefinition;
  identities: {
    revokeQueuedTokens(signal: AbortSignal): Promise<RevocationSummary>;
    readBacklog(db: Queryable): Promise<JobBacklog>;
  };
}

/** Hourly: buckets that are full again carry no state worth keeping. */
export const ratelimitCleanupJob = defineJob({
  name: 'ratelimit_cleanup',
  description: 'Deletes rate-limit buckets that are full again, in batches',
  schedule: '0 * * * *',
  // Each run scans the bucket table; buckets refill over minutes, so running more often frees nothing.
  minIntervalSeconds: 300,
  timeoutSeconds: 600,
  maxAttempts: 3,
  handler: async ({ db, logger }) => {
    const deleted = await cleanupRateLimitBuckets(db);
    logger.info({ job: 'ratelimit_cleanup', deleted }, 'rate-limit buckets cleaned');
  },
});

/** Every minute: keeps the audit statistics' pending deltas few; reads are exact without it, only slower. */
export const auditRollupJob = defineJob({
  name: 'audit_rollup',
  description: 'Folds the counts of newly written and deleted audit events into the hourly rollup',
  schedule: '@every 1m',
  minIntervalSeconds: 15,
  timeoutSeconds: 120,
  maxAttempts: 1,
  handler: async ({ db }) => {
    await foldAuditRollup(db);
  },
});

/** Every job of the product: each module contributes its definitions here. */
export function jobDefinitions(config: Config, modules: JobModules): JobDefinition[] {
  return [
    defineJob({
      name: 'auth_revoke_tokens',
      description: "Revokes queued providers' refresh tokens (RFC 7009); each token retries with its own backoff",
      schedule: '@every 1m',
      // Each slot is a job_runs row and a queue read; tokens are already unusable here, so sooner gains little.
      minIntervalSeconds: 15,
      timeoutSeconds: 300,
      // The next minute's run is the retry: a failed token waits for its own next attempt.
      maxAttempts: 1,
      handler: async (context) => {
        const summary = await modules.identities.revokeQueuedTokens(context.signal);
        if (summary.revoked + summary.retrying + summary.abandoned > 0) {
          context.logger.info(summary, 'queued provider tokens processed');
        }
      },
      backlog: (db) => modules.identities.readBacklog(db),
    }),
    ratelimitCleanupJob,
    auditRollupJob,
    modules.retention,
    ...(config.testJobs ? testJobDefinitions() : []),
  ];
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
