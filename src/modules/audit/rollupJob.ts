import { defineJob } from '../../platform/jobs.ts';
import { foldAuditRollup } from './rollupMaintenance.ts';

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
