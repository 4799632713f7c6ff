import { defineJob } from '../../platform/jobs.ts';
import { cleanupRateLimitBuckets } from './cleanup.ts';

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
