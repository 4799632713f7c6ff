import type { Logger } from 'pino';
import type { JobDefinition, RecordJobDefinitionChange } from '../modules/jobs/index.ts';
import type { Config } from './config.ts';
import { testJobDefinitions } from './testJobs.ts';

/** Every job of the product: each module contributes its definitions here. */
export function jobDefinitions(config: Config): JobDefinition[] {
  return [...(config.testJobs ? testJobDefinitions() : [])];
}

/** Until the audit module is wired in, a definition change is logged as its audit event. */
export function logJobDefinitionChanges(logger: Logger): RecordJobDefinitionChange {
  return async (_tx, event) => {
    logger.info(
      {
        event: 'jobs.definition.changed',
        actor_id: event.actor?.id,
        job: event.job,
        before: event.before,
        after: event.after,
        reason: event.reason,
        request_id: event.requestId,
        client_address: event.clientAddress,
        user_agent: event.userAgent,
      },
      'audit event',
    );
  };
}
