import { createTokenVerifier } from '../modules/auth/accessTokens.ts';
import { bearerToken } from '../modules/auth/index.ts';
import { requestOrigin } from '../platform/http/route.ts';
import { completeSignIn } from '../modules/auth/sessions.ts';
import { createAccount } from '../modules/auth/service.ts';
import type { SigningKey } from '../modules/auth/signingKeys.ts';
import { deleteAccount, findAccountByEmail, findAccountById, lockAccount } from '../modules/auth/store/accounts.ts';
import { isSessionEnded } from '../modules/auth/store/sessions.ts';
import {
  type AccountsPort,
  type CanStillSignIn,
  type CompleteSignIn,
  type IdentifyCaller,
  type RecordIdentityAudit,
  countOtherIdentities,
} from '../modules/identities/index.ts';
import type { Queryable } from '../platform/db/pool.ts';
import { unauthenticated } from '../platform/http/errors.ts';

/** The accounts table (auth module) as the identities module needs it. */
export const identityAccounts: AccountsPort = {
  findById: async (tx, id) => {
    const account = await findAccountById(tx, id);
    return account ? { id: account.id, email: account.email } : undefined;
  },
  findByEmail: async (tx, email) => {
    const account = await findAccountByEmail(tx, email);
    return account ? { id: account.id, email: account.email } : undefined;
  },
  create: async (tx, email) => {
    const account = await createAccount(tx, email, undefined);
    return { id: account.id, email: account.email };
  },
  lockForDeletion: (tx, id) => lockAccount(tx, id),
  delete: async (tx, id) => void (await deleteAccount(tx, id)),
};

/** The last-sign-in-method rule: a password, or another provider. The sign-in module may add methods here. */
export const canStillSignIn: CanStillSignIn = async (tx, accountId, without) => {
  const account = await findAccountById(tx, accountId);
  if (account?.passwordHash) {
    return true;
  }
  return (await countOtherIdentities(tx, accountId, without.provider)) > 0;
};

/** The bearer token of a start request that links a provider: verified as the route guard does. */
export function identifyCaller(db: Queryable, signingKey: SigningKey): IdentifyCaller {
  const verify = createTokenVerifier([signingKey.publicJwk]);
  return async (header) => {
    const token = bearerToken(header);
    const claims = token ? await verify(token) : 'invalid';
    if (typeof claims === 'string') {
      throw unauthenticated('The bearer token is not valid; sign in again to link a provider.');
    }
    const account = await findAccountById(db, claims.accountId);
    if (!account || account.lockedAt || (claims.sessionId !== undefined && (await isSessionEnded(db, claims.sessionId)))) {
      throw unauthenticated('The bearer token names an account or a session that has ended; sign in again to link a provider.');
    }
    return { id: account.id, email: account.email };
  };
}

/**
 * A provider sign-in ends like a password one: a session with its refresh token and an access token
 * whose method is `oidc:<provider>`, audited as `auth.sign_in.succeeded`.
 */
export function providerSignIn(signingKey: SigningKey, recordAudit: RecordIdentityAudit): CompleteSignIn {
  return async (tx, account, methods, request) => {
    const signedIn = await completeSignIn(tx, { signingKey }, account, methods, request);
    await recordAudit(tx, {
      actor: { kind: 'account', id: account.id, label: account.email },
      action: 'auth.sign_in.succeeded',
      resource: { type: 'account', id: account.id },
      outcome: 'success',
      ...requestOrigin(request),
      metadata: { methods },
    });
    return signedIn;
  };
}
