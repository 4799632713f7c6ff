import type pg from 'pg';
import { defineModule } from '../../platform/module.ts';
import { auditStatuses } from './errors.ts';
import { createAuditQueries } from './queries.ts';
import { recordAuditEvent } from './record.ts';
import { auditRoutes } from './routes.ts';

export { recordAuditEvent, CLI_ACTOR, type AuditEventInput } from './record.ts';
export { prepareMetadata, isSensitiveKey } from './redaction.ts';
export { createAuditQueries, type AuditQueries } from './queries.ts';
export {
  countAuditPartition,
  detachAuditPartition,
  dropAuditPartition,
  purgeAuditEventBatch,
  selectDetachedAuditPartitions,
  selectExpiredAuditPartitions,
} from './purge.ts';
export { ensureAuditEventPartitions, PARTITION_MONTHS_AHEAD } from './partitions.ts';
export { auditEventsAging } from './aging.ts';
export { auditStatuses } from './errors.ts';

/** The audit log: every module records its events through `api.recordAudit`, in its own transaction. */
export const auditModule = defineModule({
  name: 'audit',
  routes: auditRoutes,
  statuses: auditStatuses,
  create(needs: { pool: pg.Pool }) {
    return {
      api: { recordAudit: async (...args: Parameters<typeof recordAuditEvent>) => void (await recordAuditEvent(...args)) },
      routeDeps: { audit: createAuditQueries(needs.pool) },
    };
  },
});
