import { withTransaction } from '../../platform/db/transaction.ts';
import { type Caller, actorRef, originOf } from '../../platform/caller.ts';
import type { IdentitiesDeps } from './deps.ts';
import { IdentityError } from './errors.ts';
import { type Identity, deleteIdentity, lockAccountIdentities } from './store/identities.ts';
import { queueTokenRevocations } from './store/revocations.ts';

const revocationsOf = (identities: Identity[]) =>
  identities.flatMap((identity) =>
    identity.refreshTokenSealed ? [{ provider: identity.provider, subject: identity.subject, tokenSealed: identity.refreshTokenSealed }] : [],
  );

/**
 * Unlinks the caller's identity at a provider, refused when nothing else could sign in. The
 * provider's token is queued for revocation in the same transaction; the provider is never called here.
 */
export async function unlinkProvider(deps: Pick<IdentitiesDeps, 'pool' | 'canStillSignIn' | 'recordAudit'>, provider: string, caller: Caller): Promise<void> {
  const { actor } = caller;
  await withTransaction(deps.pool, async (tx) => {
    const identity = (await lockAccountIdentities(tx, actor.id)).find((candidate) => candidate.provider === provider);
    if (!identity) {
      throw new IdentityError('identity_not_found', `The account is not linked to ${provider}.`);
    }
    if (!(await deps.canStillSignIn(tx, actor.id, { provider }))) {
      throw new IdentityError('last_sign_in_method', `Unlinking ${provider} would leave the account no way to sign in.`);
    }
    await deleteIdentity(tx, identity.id);
    const queued = revocationsOf([identity]);
    await queueTokenRevocations(tx, queued);
    await deps.recordAudit(tx, {
      actor: actorRef(actor),
      action: 'auth.identity.unlinked',
      resource: { type: 'identity', id: identity.id },
      outcome: 'success',
      ...originOf(caller),
      metadata: { provider, revocation_queued: queued.length > 0 },
    });
  });
}

/**
 * Deletes the caller's account at once. Its providers' tokens are queued for revocation in the
 * same transaction, so the answer never waits for a provider, even one that is down.
 */
export async function deleteOwnAccount(deps: Pick<IdentitiesDeps, 'pool' | 'accounts' | 'recordAudit'>, caller: Caller): Promise<void> {
  const { actor } = caller;
  await withTransaction(deps.pool, async (tx) => {
    // Identities before the account, in the order a sign-in takes them (its identity, then its session's
    // key share on the account): the other order deadlocks with a sign-in of the same account.
    await lockAccountIdentities(tx, actor.id);
    if (!(await deps.accounts.lockForDeletion(tx, actor.id))) {
      throw new IdentityError('account_not_found', 'The account no longer exists.');
    }
    // Read again under the account's lock: a link that committed while this waited is queued too.
    const identities = await lockAccountIdentities(tx, actor.id);
    const queued = revocationsOf(identities);
    await queueTokenRevocations(tx, queued);
    await deps.accounts.delete(tx, actor.id);
    await deps.recordAudit(tx, {
      actor: actorRef(actor),
      action: 'auth.account.deleted',
      resource: { type: 'account', id: actor.id },
      outcome: 'success',
      ...originOf(caller),
      metadata: { identities: identities.map((identity) => identity.provider), revocations_queued: queued.length },
    });
  });
}
