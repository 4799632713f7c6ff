import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { withTransaction } from '../../platform/db/transaction.ts';
import type { RunTask } from '../../platform/tasks/pool.ts';
import { defineTask } from '../../platform/tasks/task.ts';
import type { RevocationMetrics } from './metrics.ts';
import type { RecordIdentityAudit } from './ports.ts';
import type { ProviderDirectory } from './providers.ts';
import { type ClaimedRevocation, type FailedRevocation, claimDueRevocations, countOutcomes, deleteRevoked, recordFailures } from './store/revocations.ts';
import type * as task from './tasks/revokeTokens.ts';

export const revokeTokensTask = defineTask<typeof task.revokeTokens>('identities.revoke_tokens', import.meta.url, './tasks/revokeTokens', 'revokeTokens');

export interface RevocationPolicy {
  /** Rows claimed and handed to one task. */
  batchSize: number;
  /** Requests in flight at once inside the task. */
  concurrency: number;
  /** Bound on each request to a provider. */
  timeoutMs: number;
  /** How long a claim holds its rows; a dead claimer's rows come back after it. */
  leaseSeconds: number;
  /** First retry after this; each further failure doubles it, at most 6 hours. */
  backoffBaseSeconds: number;
  /** Failures after which a row is deleted and audited as abandoned. */
  maxAttempts: number;
  /** No new batch is claimed after this long, so a run ends well inside its job timeout. */
  budgetMs: number;
}

export const DEFAULT_REVOCATION_POLICY: RevocationPolicy = {
  batchSize: 200,
  concurrency: 16,
  timeoutMs: 5_000,
  // Worst case for a batch: 200 / 16 rounds × 5 s ≈ 65 s; the lease leaves room for the writes.
  leaseSeconds: 180,
  backoffBaseSeconds: 60,
  maxAttempts: 10,
  budgetMs: 240_000,
};

export interface RevocationDeps {
  pool: pg.Pool;
  runTask: RunTask;
  providers: ProviderDirectory;
  /** The encryption key text, handed to the task that opens the tokens. */
  encryptionKeys: string;
  recordAudit: RecordIdentityAudit;
  metrics: RevocationMetrics;
}

export interface RevocationSummary {
  revoked: number;
  retrying: number;
  abandoned: number;
}

interface Outcome {
  row: ClaimedRevocation;
  revoked: boolean;
  error?: string;
}

/** Where a provider can be reached for revocation, or why it cannot be now. */
function revocationTarget(deps: RevocationDeps, name: string): task.RevocationProvider | string {
  const spec = deps.providers.spec(name);
  if (!spec) {
    return 'provider_not_configured';
  }
  const configuration = deps.providers.current(name);
  if (!configuration) {
    return 'provider_not_discovered';
  }
  const endpoint = configuration.serverMetadata().revocation_endpoint;
  if (!endpoint) {
    return 'no_revocation_endpoint';
  }
  return {
    name,
    revocationEndpoint: endpoint,
    clientId: spec.clientId,
    clientSecret: spec.clientSecret,
    authMethod: spec.authMethod,
    insecureLoopback: spec.insecureLoopback,
  };
}

/** Sends one claimed batch to the task; rows of unreachable providers fail without a request. */
async function revokeBatch(deps: RevocationDeps, policy: RevocationPolicy, rows: ClaimedRevocation[], signal: AbortSignal | undefined): Promise<Outcome[]> {
  const targets = new Map([...new Set(rows.map((row) => row.provider))].map((name) => [name, revocationTarget(deps, name)]));
  const outcomes: Outcome[] = [];
  const sendable: ClaimedRevocation[] = [];
  for (const row of rows) {
    const target = targets.get(row.provider)!;
    if (typeof target === 'string') {
      outcomes.push({ row, revoked: false, error: target });
    } else {
      sendable.push(row);
    }
  }
  if (sendable.length === 0) {
    return outcomes;
  }
  const providers = [...targets.values()].filter((target): target is task.RevocationProvider => typeof target !== 'string');
  try {
    const results = await deps.runTask(
      revokeTokensTask,
      {
        keys: deps.encryptionKeys,
        providers,
        tokens: sendable.map((row) => ({ id: row.id, provider: row.provider, subject: row.subject, tokenSealed: row.tokenSealed })),
        concurrency: policy.concurrency,
        timeoutMs: policy.timeoutMs,
      },
      signal ? { signal } : {},
    );
    results.forEach((result, index) => outcomes.push({ row: sendable[index]!, revoked: result.revoked, ...(result.error ? { error: result.error } : {}) }));
  } catch (error) {
    if (signal?.aborted) {
      // Stopped (timeout, shutdown): the rows stay leased and come back after the lease.
      throw error;
    }
    const code = (error as { code?: unknown }).code;
    const failure = `task_failed:${typeof code === 'string' ? code : 'unknown'}`;
    sendable.forEach((row) => outcomes.push({ row, revoked: false, error: failure }));
  }
  return outcomes;
}

/** Deletes revoked rows, schedules retries, abandons rows past their last attempt with an audit event. */
async function recordBatch(deps: RevocationDeps, policy: RevocationPolicy, claimId: string, outcomes: Outcome[]): Promise<RevocationSummary> {
  const revokedIds = outcomes.filter((o) => o.revoked).map((o) => o.row.id);
  const failures: FailedRevocation[] = outcomes.filter((o) => !o.revoked).map((o) => ({ id: o.row.id, error: o.error ?? 'provider_error' }));
  const summary = await withTransaction(deps.pool, async (tx) => {
    const deleted = await deleteRevoked(tx, claimId, revokedIds);
    const failed = await recordFailures(tx, claimId, failures, policy);
    for (const row of failed.abandoned) {
      await deps.recordAudit(tx, {
        actor: { kind: 'system', id: 'auth_revoke_tokens', label: 'system:auth_revoke_tokens' },
        action: 'auth.identity.revocation_abandoned',
        resource: { type: 'token_revocation', id: row.id },
        outcome: 'failure',
        metadata: { provider: row.provider, revocation_id: row.id, attempts: row.attempts, last_error: row.lastError },
      });
    }
    const counts = { revoked: deleted, retrying: failed.retrying, abandoned: failed.abandoned.length };
    await countOutcomes(tx, counts);
    return { counts, abandonedIds: new Set(failed.abandoned.map((row) => row.id)) };
  });
  for (const outcome of outcomes) {
    deps.metrics.outcome(outcome.row.provider, outcome.revoked ? 'revoked' : summary.abandonedIds.has(outcome.row.id) ? 'abandoned' : 'retrying', 1);
  }
  return summary.counts;
}

/**
 * Revokes due queued tokens a batch at a time until none is due, the budget is spent or the signal
 * stops the run. Provider failures are per row (backoff); only database errors reject.
 */
export async function revokeQueuedTokens(
  deps: RevocationDeps,
  policy: RevocationPolicy = DEFAULT_REVOCATION_POLICY,
  signal?: AbortSignal,
): Promise<RevocationSummary> {
  const total: RevocationSummary = { revoked: 0, retrying: 0, abandoned: 0 };
  const deadline = performance.now() + policy.budgetMs;
  while (!signal?.aborted && performance.now() < deadline) {
    const claimId = randomUUID();
    const rows = await claimDueRevocations(deps.pool, claimId, policy.batchSize, policy.leaseSeconds);
    if (rows.length === 0) {
      break;
    }
    const outcomes = await revokeBatch(deps, policy, rows, signal);
    const summary = await recordBatch(deps, policy, claimId, outcomes);
    total.revoked += summary.revoked;
    total.retrying += summary.retrying;
    total.abandoned += summary.abandoned;
    if (rows.length < policy.batchSize) {
      break;
    }
  }
  return total;
}
