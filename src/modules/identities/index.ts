import type pg from 'pg';
import type { Logger } from 'pino';
import type client from 'prom-client';
import type { RunTask } from '../../platform/tasks/pool.ts';
import type { SecretBox } from '../../platform/secrets/secretBox.ts';
import { type BackplaneContext, defineModule } from '../../platform/module.ts';
import { auditModule } from '../audit/index.ts';
import { authModule } from '../auth/index.ts';
import { canStillSignIn, identityAccounts, providerSignIn } from './authAccounts.ts';
import type { IdentitiesDeps } from './deps.ts';
import { identitiesStatuses } from './errors.ts';
import { createRevocationMetrics } from './metrics.ts';
import type { AccountsPort, CanStillSignIn, CompleteSignIn, IdentifyCaller, RecordIdentityAudit } from './ports.ts';
import type { ProviderSpec } from './providerConfig.ts';
import { createProviderDirectory } from './providers.ts';
import { revokeTokensJob } from './revokeTokensJob.ts';
import { identitiesRoutes } from './routes.ts';
import { DEFAULT_REVOCATION_POLICY, type RevocationPolicy, revokeQueuedTokens } from './revokeQueued.ts';

// For backplane commands, which list the jobs without running them.
export { revokeTokensJob } from './revokeTokensJob.ts';
export { identitiesStatuses } from './errors.ts';
export { countOtherIdentities } from './store/identities.ts';
export type { IdentitiesDeps } from './deps.ts';
export type { AccountRef, AccountsPort, CanStillSignIn, CompleteSignIn, IdentifyCaller, RecordIdentityAudit, SignInRef, TokenBody } from './ports.ts';
export { parseProviderList, type ProviderSpec } from './providerConfig.ts';
export { canStillSignIn, identityAccounts, providerSignIn } from './authAccounts.ts';
export { DEFAULT_REVOCATION_POLICY, type RevocationPolicy, type RevocationSummary } from './revokeQueued.ts';

export interface IdentitiesNeeds {
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

/** Third-party sign-in (OpenID Connect) and the revocation of providers' refresh tokens. */
export const identitiesModule = defineModule({
  name: 'identities',
  needs: ['audit', 'auth'],
  /** Audit action → what the event records: the catalogue (ADR 0120); names are public API. */
  auditActions: {
    'auth.identity.linked': 'A provider identity was linked to an account',
    'auth.identity.unlinked': 'A provider identity was unlinked',
    'auth.identity.revocation_abandoned': 'A provider token revocation was given up after its retries',
    'auth.account.deleted': 'An account was deleted with its identities',
  },
  routes: identitiesRoutes,
  statuses: identitiesStatuses,
  /** Providers are discovered in the background from creation on; close() stops retrying. */
  // Declared for commands (jobs list, run); the instance's create binds it to its revocations.
  jobs: [revokeTokensJob(() => Promise.reject(new Error('the revocation job runs on an instance')))],
  create(context: IdentitiesContext) {
    const auth = context.use(authModule);
    const recordAudit = context.use(auditModule).recordAudit;
    const { box, keyText } = context.secrets();
    return createIdentities({
      pool: context.pool,
      logger: context.logger,
      registry: context.registry,
      runTask: context.runTask,
      providers: context.config.oidcProviders,
      box,
      encryptionKeys: keyText,
      publicUrl: context.config.publicUrl,
      accounts: identityAccounts,
      completeSignIn: providerSignIn(auth.signingKey, recordAudit),
      canStillSignIn,
      identifyCaller: auth.identifyBearer,
      recordAudit,
    });
  },
});

/** What the identities module reads beyond the public context. */
export type IdentitiesContext = BackplaneContext<{ oidcProviders: ProviderSpec[]; publicUrl: string }>;

/** The module on an instance, from its needs (tests build one on their database). */
export function createIdentities(needs: IdentitiesNeeds) {
  const logger = needs.logger.child({ module: 'identities' });
  const providers = createProviderDirectory(needs.providers, logger);
  const metrics = createRevocationMetrics(
    needs.registry,
    needs.pool,
    needs.providers.map((provider) => provider.name),
  );
  const policy: RevocationPolicy = { ...DEFAULT_REVOCATION_POLICY, ...needs.revocationPolicy };
  const revocationDeps = { ...needs, providers, metrics };
  /** One run of auth_revoke_tokens: due tokens, a batch at a time, until none is due or the signal stops it. */
  const revokeDue = (signal?: AbortSignal) => revokeQueuedTokens(revocationDeps, policy, signal);
  return {
    api: { providers, revokeQueuedTokens: revokeDue },
    routeDeps: {
      pool: needs.pool,
      providers,
      box: needs.box,
      publicUrl: needs.publicUrl,
      accounts: needs.accounts,
      completeSignIn: needs.completeSignIn,
      canStillSignIn: needs.canStillSignIn,
      identifyCaller: needs.identifyCaller,
      recordAudit: needs.recordAudit,
    } satisfies IdentitiesDeps,
    jobs: [revokeTokensJob(revokeDue)],
    /** Reported by /readyz?verbose and /ops/system; they never fail readiness. */
    readiness: providers.readinessChecks(),
    close: () => providers.close(),
  };
}
