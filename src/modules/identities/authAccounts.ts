import { type SigningKey, accountDirectory, completeSignIn } from '../auth/index.ts';
import { originOf } from '../../platform/caller.ts';
import type { AccountsPort, CanStillSignIn, CompleteSignIn, RecordIdentityAudit } from './ports.ts';
import { countOtherIdentities } from './store/identities.ts';

// What identities takes of the auth module: its accounts, its sign-in rule, its sessions.

/** The accounts table (auth module) as the identities module needs it. */
export const identityAccounts: AccountsPort = accountDirectory;

/** The last-sign-in-method rule: a password, or another provider. The sign-in module may add methods here. */
export const canStillSignIn: CanStillSignIn = async (tx, accountId, without) => {
  if (await accountDirectory.hasPassword(tx, accountId)) {
    return true;
  }
  return (await countOtherIdentities(tx, accountId, without.provider)) > 0;
};

/**
 * A provider sign-in ends like a password one: a session with its refresh token and an access token
 * whose method is `oidc:<provider>`, audited as `auth.sign_in.succeeded`.
 */
export function providerSignIn(signingKey: SigningKey, recordAudit: RecordIdentityAudit): CompleteSignIn {
  return async (tx, account, methods, origin) => {
    const signedIn = await completeSignIn(tx, { signingKey }, account, methods, origin);
    await recordAudit(tx, {
      actor: { kind: 'account', id: account.id, label: account.email },
      action: 'auth.sign_in.succeeded',
      resource: { type: 'account', id: account.id },
      outcome: 'success',
      ...originOf(origin),
      metadata: { methods },
    });
    return signedIn;
  };
}
