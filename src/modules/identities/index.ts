import type pg from 'pg';
import type { Logger } from 'pino';
import type client from 'prom-client';
import type { RunTask } from '../../platform/tasks/pool.ts';
import type { SecretBox } from '../../platform/secrets/secretBox.ts';
import { readRevocationBacklog } from './backlog.ts';
import type { IdentitiesDeps } from './deps.ts';
import { identitiesStatuses } from './errors.ts';
import { createRevocationMetrics } from './metrics.ts';
import type { AccountsPort, CanStillSignIn, CompleteSignIn, IdentifyCaller, RecordIdentityAudit } from './ports.ts';
import type { ProviderSpec } from './providerConfig.ts';
import { createProviderDirectory } from './providers.ts';
import { DEFAULT_REVOCATION_POLICY, type RevocationPolicy, revokeQueuedTokens } from './revokeQueued.ts';

export { identitiesRoutes } from './routes.ts';
export { readRevocationBacklog } from './backlog.ts';
export { identitiesStatuses } from './errors.ts';
export { countOtherIdentities } from './store/identities.ts';
export type { IdentitiesDeps } from './deps.ts';
export type { AccountRef, AccountsPort, CanStillSignIn, CompleteSignIn, IdentifyCaller, RecordIdentityAudit, TokenBody } from './ports.ts';
export type { ProviderSpec } from './providerConfig.ts';
export { DEFAULT_REVOCATION_POLICY, type RevocationPolicy, type RevocationSummary } from './revokeQueued.ts';

export interface IdentitiesModuleDeps {
  pool: pg.Pool;
  logger: Logger;
  registry: client.Registry;
  runTask: RunTask;
  providers: ProviderSpec[];
  box: SecretBox;
  /** The encryption key text; the revocation task opens the queued tokens with it on its thread. */
  encryptionKeys: string;
  publicUrl: string;
  accounts: AccountsPort;
  completeSignIn: CompleteSignIn;
  canStillSignIn: CanStillSignIn;
  identifyCaller: IdentifyCaller;
  recordAudit: RecordIdentityAudit;
  revocationPolicy?: Partial<RevocationPolicy>;
}

/** Providers are discovered in the background from creation on; close() stops retrying. */
export function createIdentitiesModule(deps: IdentitiesModuleDeps) {
  const logger = deps.logger.child({ module: 'identities' });
  const providers = createProviderDirectory(deps.providers, logger);
  const metrics = createRevocationMetrics(deps.registry, deps.pool);
  const policy: RevocationPolicy = { ...DEFAULT_REVOCATION_POLICY, ...deps.revocationPolicy };
  const routeDeps: IdentitiesDeps = {
    pool: deps.pool,
    providers,
    box: deps.box,
    publicUrl: deps.publicUrl,
    accounts: deps.accounts,
    completeSignIn: deps.completeSignIn,
    canStillSignIn: deps.canStillSignIn,
    identifyCaller: deps.identifyCaller,
    recordAudit: deps.recordAudit,
  };
  const revocationDeps = {
    pool: deps.pool,
    runTask: deps.runTask,
    providers,
    encryptionKeys: deps.encryptionKeys,
    recordAudit: deps.recordAudit,
    metrics,
  };
  return {
    routeDeps,
    statuses: identitiesStatuses,
    providers,
    /** Reported by /readyz?verbose and /ops/system; they never fail readiness. */
    readinessChecks: () => providers.readinessChecks(),
    /** One run of auth_revoke_tokens: due tokens, a batch at a time, until none is due or the signal stops it. */
    revokeQueuedTokens: (signal?: AbortSignal) => revokeQueuedTokens(revocationDeps, policy, signal),
    readBacklog: readRevocationBacklog,
    close: () => providers.close(),
  };
}
