import { recordAuditEvent } from '../modules/audit/index.ts';
import type { JobDefinition, RecordJobDefinitionChange } from '../modules/jobs/index.ts';
import type { Config } from './config.ts';
import { testJobDefinitions } from './testJobs.ts';

/** The jobs modules declare, built by the instance with their dependencies. */
export interface ModuleJobs {
  retention: JobDefinition;
}

/** Every job of the product: each module contributes its definitions here. */
export function jobDefinitions(config: Config, modules: ModuleJobs): JobDefinition[] {
  return [modules.retention, ...(config.testJobs ? testJobDefinitions() : [])];
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
