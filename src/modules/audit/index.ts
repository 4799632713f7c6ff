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
export { foldAuditRollup, subtractAuditPartitionFromRollup } from './rollupMaintenance.ts';
export { ensureAuditEventPartitions, PARTITION_MONTHS_AHEAD } from './partitions.ts';
export { auditRoutes } from './routes.ts';
export { auditStatuses } from './errors.ts';
