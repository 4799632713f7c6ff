import { defineJob } from '../../platform/jobs.ts';
import { readRevocationBacklog } from './backlog.ts';
import type { RevocationSummary } from './revokeQueued.ts';

/** Every minute: queued providers' refresh tokens are revoked, each retrying with its own backoff. */
export const revokeTokensJob = (revokeDue: (signal: AbortSignal) => Promise<RevocationSummary>) =>
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
      const summary = await revokeDue(context.signal);
      if (summary.revoked + summary.retrying + summary.abandoned > 0) {
        context.logger.info(summary, 'queued provider tokens processed');
      }
    },
    backlog: readRevocationBacklog,
  });
