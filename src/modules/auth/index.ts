import type { Logger } from 'pino';
import type { NotificationListener } from '../../platform/db/listener.ts';
import type { Queryable } from '../../platform/db/pool.ts';
import { createAccessRevocations } from './accessRevocations.ts';
import { createTokenVerifier } from './accessTokens.ts';
import { authStatuses } from './errors.ts';
import { createGrantsCache } from './grantsCache.ts';
import { type OpsMfaPolicy, createRouteGuard } from './guard.ts';
import { loadSigningKey } from './signingKeys.ts';

export interface AuthModuleDeps {
  db: Queryable;
  listener: NotificationListener;
  logger: Logger;
  jwtPrivateKey: string | undefined;
  mfaPolicy: OpsMfaPolicy;
}

export { authRoutes } from './routes.ts';
export { rolesRoutes } from './rolesRoutes.ts';
export { createRoleChanges, type RoleChanges, type RecordRoleAudit } from './roleChanges.ts';
export { type OpsMfaPolicy, bearerToken } from './guard.ts';
export { normalizeEmail, parseEmail, type ParsedEmail } from './email.ts';
export { authStatuses } from './errors.ts';
export { signInRoutes } from './signInRoutes.ts';
export { mfaRoutes } from './mfaRoutes.ts';
export { completeSignIn, type SignedIn, type SessionDeps } from './sessions.ts';
export type { AttemptLimits, SignInDeps } from './signIn.ts';
export type { AuthAuditEvent, RecordAuthAudit } from './authAudit.ts';
// For backplane commands, which reach the module only through this file.
export { createAccount, createRole, grantRoleToAccount, issueCliToken, setAccountLockedByEmail } from './service.ts';
export { listAccounts } from './store/accounts.ts';
export { listRoles } from './store/roles.ts';
export { loadSigningKey } from './signingKeys.ts';

export async function createAuthModule(deps: AuthModuleDeps) {
  const signingKey = await loadSigningKey(deps.db, deps.jwtPrivateKey);
  const grantsCache = createGrantsCache(deps.db, deps.listener, deps.logger);
  await grantsCache.reload();
  const revocations = createAccessRevocations(deps.db, deps.listener, deps.logger);
  await revocations.load();
  const guard = createRouteGuard(createTokenVerifier([signingKey.publicJwk]), grantsCache, deps.mfaPolicy, revocations);
  return {
    guard,
    signingKey,
    statuses: authStatuses,
    close: () => {
      grantsCache.close();
      revocations.close();
    },
  };
}
