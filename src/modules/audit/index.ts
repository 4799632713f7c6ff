import type { RecordAudit } from '../../platform/audit.ts';
import { auditEventsAging } from './aging.ts';
import { createPool } from '../../platform/db/pool.ts';
import { ensureAuditEventPartitions } from './partitions.ts';
import { type BackplaneContext, defineModule } from '../../platform/module.ts';
import { auditSettings } from './settings.ts';
import { auditStatuses } from './errors.ts';
import { createAuditQueries } from './queries.ts';
import { recordAuditEvent } from './record.ts';
import { auditRoutes } from './routes.ts';
import { auditRollupJob } from './rollupJob.ts';

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
export { auditEventsAging } from './aging.ts';
export { auditStatuses } from './errors.ts';

export { auditSettings } from './settings.ts';

/** What the audit module reads of the configuration: its primary work opens a pool (ADR 0092). */
export type AuditContext = BackplaneContext<AuditConfig>;

interface AuditConfig {
  databasePooling: 'session' | 'transaction';
}

/** The audit log: every module records its events through `api.recordAudit`, in its own transaction. */
export const auditModule = defineModule({
  name: 'audit',
  settings: auditSettings,
  routes: auditRoutes,
  statuses: auditStatuses,
  /** Permission name → what it allows; names are public API. */
  permissions: { 'ops.audit.read': 'Read the audit log and its statistics' },
  /** How its tables age and are purged by the retention job. */
  retention: [auditEventsAging],
  jobs: [auditRollupJob],
  // The retention job keeps the partitions ahead too; creating them as the pod starts covers a job disabled or not yet run.
  async primaryWork({ config, databaseUrl, logger }) {
    const pool = createPool({
      connectionString: databaseUrl,
      max: 1,
      applicationName: 'backplane-audit-partitions',
      pooling: (config as AuditConfig).databasePooling,
    });
    try {
      const created = await ensureAuditEventPartitions(pool);
      if (created > 0) {
        logger.info({ created }, 'audit event partitions created ahead');
      }
    } catch (error) {
      logger.warn({ err: error }, 'could not create audit event partitions ahead; new months go to the default partition until the retention job runs');
    } finally {
      await pool.end();
    }
    return undefined;
  },
  create(context: AuditContext) {
    const recordAudit: RecordAudit = async (tx, event) => void (await recordAuditEvent(tx, event));
    return { api: { recordAudit }, routeDeps: { audit: createAuditQueries(context.pool) } };
  },
});
