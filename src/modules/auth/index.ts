import type { Queryable } from '../../platform/db/pool.ts';
import { type BackplaneContext, defineModule } from '../../platform/module.ts';
import { auditModule } from '../audit/index.ts';
import { rateLimitModule } from '../ratelimit/index.ts';
import { type SettingsReader, settingsModule } from '../settings/index.ts';
import { coveredRateLimitKeys, signInAttempts } from './signInLimits.ts';
import { authSettings } from './settings.ts';
import { createAccessRevocations } from './accessRevocations.ts';
import { createTokenVerifier } from './accessTokens.ts';
import { authStatuses } from './errors.ts';
import { createGrantsCache } from './grantsCache.ts';
import { type OpsMfaPolicy, createRouteGuard, identifyBearer } from './guard.ts';
import { mfaRoutes } from './mfaRoutes.ts';
import { createRoleChanges } from './roleChanges.ts';
import { accountsRoutes } from './accountsRoutes.ts';
import { createAccountOps } from './accountOps.ts';
import { rolesRoutes } from './rolesRoutes.ts';
import { authRoutes } from './routes.ts';
import { signInRoutes } from './signInRoutes.ts';
import { createKeyRing } from './keyRing.ts';
import type { SigningKey } from './signingKeys.ts';

export { createRoleChanges, type RoleChanges, type RecordRoleAudit } from './roleChanges.ts';
export { lockAccountBy } from './accountOps.ts';
// For backplane commands: role changes bounded by what the caller holds, as through the API.
export { createRoleBy, grantRoleBy, withRoleChange } from './roleChanges.ts';
export { type OpsMfaPolicy, bearerToken } from './guard.ts';
export { normalizeEmail, parseEmail, type ParsedEmail } from './email.ts';
export { authStatuses } from './errors.ts';
export { completeSignIn, type SignedIn, type SessionDeps } from './sessions.ts';
export { accountDirectory } from './accountDirectory.ts';
export { loadSigningKey, type SigningKey, SigningKeyUnreadable } from './signingKeys.ts';
export { rotateSigningKey, LONGEST_TOKEN_TTL_SECONDS } from './keyRotation.ts';
export { listSigningKeys } from './store/signingKeys.ts';
// For backplane commands, which reach the module only through this file.
export { createAccount, createRole, grantRoleToAccount, issueCliToken, setAccountLockedByEmail } from './service.ts';
export { issueAccessToken } from './accessTokens.ts';
export { declarePermissions, knownPermissions } from './permissions.ts';
export { listAccounts } from './store/accounts.ts';
export { listRoles } from './store/roles.ts';

/** The account of a bearer header, checked as the route guard does (tests and commands build one on its own). */
export const bearerIdentifier = (db: Queryable, signingKey: SigningKey) => identifyBearer(db, createTokenVerifier([signingKey.publicJwk]));
export type { Attempt, AttemptLimits, SignInDeps } from './signIn.ts';

export { authSettings } from './settings.ts';

/** What the auth module reads beyond the public context: the configured signing key and the box for secrets. */
export type AuthContext = BackplaneContext<{ jwtPrivateKey: string | undefined }>;

/** Accounts, roles, sessions, two-factor sign-in and the bearer check of every route. */
export const authModule = defineModule({
  name: 'auth',
  needs: ['audit', 'settings', 'ratelimit'],
  settings: authSettings,
  /** Audit action → what the event records: the catalogue (ADR 0120); names are public API. */
  auditActions: {
    'auth.sign_in.succeeded': 'An account signed in (password, second factor or a provider)',
    'auth.sign_in.failed': 'A sign-in was refused',
    'auth.signed_out': 'A session was ended',
    'auth.session.reuse_detected': 'A refresh token was used twice: its session was revoked',
    'auth.token.issued': '`backplane token issue` issued an access token',
    'auth.signing_key.rotated': 'The token signing key was rotated',
    'auth.account.locked': 'An account was locked',
    'auth.account.unlocked': 'An account was unlocked',
    'auth.mfa.totp.enabled': 'An account enabled its authenticator app',
    'auth.mfa.totp.disabled': 'An account disabled its authenticator app',
    'auth.mfa.recovery_codes.regenerated': 'An account regenerated its recovery codes',
    'auth.role.created': 'A role was created',
    'auth.role.changed': 'The permissions of a role were changed',
    'auth.role.change_denied': 'A role change was refused',
    'auth.role.granted': 'A role was granted to an account',
    'auth.role.grant_denied': 'A role grant was refused',
    'auth.role.revoked': 'A role was revoked from an account',
    'auth.role.revoke_denied': 'A role revocation was refused',
  },
  routes: [...authRoutes, ...signInRoutes, ...mfaRoutes, ...rolesRoutes, ...accountsRoutes],
  statuses: authStatuses,
  /** Permission name → what it allows; names are public API. */
  permissions: {
    'ops.roles.read': 'List roles and their permissions',
    'ops.roles.write': 'Create and change roles and grant them (only permissions the caller holds)',
    'ops.accounts.read': 'List accounts by email, role and whether they are locked',
    'ops.accounts.write': 'Lock and unlock accounts',
  },
  async create(context: AuthContext) {
    const settings: SettingsReader<(typeof authSettings)[number]> = context.use(settingsModule).reader;
    const rateLimits = context.use(rateLimitModule);
    rateLimits.coverKeys(coveredRateLimitKeys);
    const { pool, listener, logger } = context;
    // Seals the authenticator seeds and the token signing keys.
    const { box } = context.secrets();
    const recordAudit = context.use(auditModule).recordAudit;
    // The `auth.ops_require_mfa` setting, read on every check.
    const mfaPolicy: OpsMfaPolicy = { opsRequireMfa: () => settings.boolean('auth.ops_require_mfa') };
    const keys = await createKeyRing({ db: pool, listener, logger, box, pem: context.config.jwtPrivateKey });
    const { signingKey } = keys;
    const grantsCache = createGrantsCache(pool, listener, logger);
    await grantsCache.reload();
    const revocations = createAccessRevocations(pool, listener, logger);
    await revocations.load();
    const verify = createTokenVerifier(keys.verificationKey);
    return {
      api: {
        guard: createRouteGuard(verify, grantsCache, mfaPolicy, revocations),
        signingKey,
        /** The account of a bearer header, for a public route that may carry one (linking a provider). */
        identifyBearer: identifyBearer(pool, verify),
      },
      routeDeps: {
        signIn: { pool, signingKey, secrets: box, attempts: signInAttempts(rateLimits.limiter), recordAudit },
        roles: createRoleChanges(pool, recordAudit),
        accounts: createAccountOps(pool, recordAudit),
        keys,
      },
      close: () => {
        grantsCache.close();
        keys.close();
        revocations.close();
      },
    };
  },
});
