import * as oidc from 'openid-client';
import type { Queryable } from '../../platform/db/pool.ts';
import { type RequestOrigin, originOf } from '../../platform/caller.ts';
import { withTransaction } from '../../platform/db/transaction.ts';
import { type IdentitiesDeps, redirectUri, tokenContext } from './deps.ts';
import { IdentityError } from './errors.ts';
import type { AccountRef, SignInRef, TokenBody } from './ports.ts';
import { describeProviderFailure, isProviderOutage } from './providerFailures.ts';
import { flowCookie, readFlowCookie, sameBrowser } from './flowCookie.ts';
import { type Flow, deleteFlow, lockFlow } from './store/flows.ts';
import { type Identity, findIdentityForUpdate, insertIdentity, lockSubject, recordIdentitySignIn } from './store/identities.ts';
import { queueTokenRevocations } from './store/revocations.ts';

/** What the provider sent back to the callback: every parameter, as openid-client checks them all. */
export type CallbackQuery = { state: string; code?: string | undefined; error?: string | undefined } & Record<string, unknown>;

interface ProviderAnswer {
  subject: string;
  email: string | undefined;
  emailVerified: boolean;
  refreshToken: string | undefined;
}

function exchangeFailed(provider: string, error: unknown): IdentityError {
  const failure = describeProviderFailure(error);
  return isProviderOutage(failure)
    ? new IdentityError('provider_unavailable', `The provider ${provider} did not answer; try again later.`, { cause: error })
    : new IdentityError('provider_sign_in_failed', `The provider ${provider} refused the sign-in or its answer failed the checks (${failure}).`, {
        cause: error,
      });
}

/** The code exchange with PKCE, state and nonce checks, and the ID token checks, all by openid-client. */
async function exchangeCode(
  deps: IdentitiesDeps,
  provider: string,
  query: CallbackQuery,
  flow: { state: string; codeVerifier: string; nonce: string },
): Promise<ProviderAnswer> {
  const configuration = await deps.providers.configuration(provider);
  const callbackUrl = new URL(redirectUri(deps, provider));
  for (const [name, value] of Object.entries(query)) {
    if (typeof value === 'string') {
      callbackUrl.searchParams.set(name, value);
    }
  }
  try {
    const tokens = await oidc.authorizationCodeGrant(configuration, callbackUrl, {
      pkceCodeVerifier: flow.codeVerifier,
      expectedState: flow.state,
      expectedNonce: flow.nonce,
      idTokenExpected: true,
    });
    const claims = tokens.claims()!;
    let email = typeof claims.email === 'string' ? claims.email : undefined;
    let emailVerified = claims.email_verified === true;
    // Many providers put the email in userinfo only, unless asked for it in the ID token.
    if (email === undefined && configuration.serverMetadata().userinfo_endpoint) {
      const info = await oidc.fetchUserInfo(configuration, tokens.access_token, claims.sub);
      email = typeof info.email === 'string' ? info.email : undefined;
      emailVerified = info.email_verified === true;
    }
    return { subject: claims.sub, email, emailVerified, refreshToken: tokens.refresh_token };
  } catch (error) {
    throw exchangeFailed(provider, error);
  }
}

// What openid-client's randomState() makes, with room for other lengths; anything else is no state of ours.
const STATE = /^[A-Za-z0-9_-]{16,128}$/;

const invalidState = () =>
  new IdentityError('invalid_state', 'The sign-in state is unknown, expired, already used or was started in another browser; start again.');

/**
 * The flow of this state if this browser started it, taken so it cannot be used again. A callback
 * from another browser (another cookie, or none) leaves the flow to the browser that owns it.
 */
async function takeBrowserFlow(deps: IdentitiesDeps, provider: string, state: string, cookie: string): Promise<Flow> {
  const secret = readFlowCookie(flowCookie(deps.publicUrl), cookie);
  if (!secret || !STATE.test(state)) {
    throw invalidState();
  }
  const flow = await withTransaction(deps.pool, async (tx) => {
    const stored = await lockFlow(tx, state);
    if (!stored || !sameBrowser(stored.browserHash, secret)) {
      return undefined;
    }
    await deleteFlow(tx, state);
    return stored;
  });
  if (!flow?.live || flow.provider !== provider) {
    throw invalidState();
  }
  return flow;
}

/** True when the provider sent the very token it sent last time (revoking the old would end the new). */
function isStoredToken(deps: IdentitiesDeps, identity: Identity, refreshToken: string): boolean {
  try {
    return deps.box.open(identity.refreshTokenSealed!, tokenContext(identity.provider, identity.subject)) === refreshToken;
  } catch {
    return false;
  }
}

/** A sign-in of a linked identity: a newer refresh token replaces the stored one, which is queued for revocation in this transaction. */
async function recordSignIn(deps: IdentitiesDeps, tx: Queryable, identity: Identity, answer: ProviderAnswer, sealed: string | null): Promise<void> {
  await recordIdentitySignIn(tx, identity.id, answer.email ?? null, sealed);
  if (sealed && identity.refreshTokenSealed && !isStoredToken(deps, identity, answer.refreshToken!)) {
    await queueTokenRevocations(tx, [{ provider: identity.provider, subject: identity.subject, tokenSealed: identity.refreshTokenSealed }]);
  }
}

async function linkIdentity(
  deps: IdentitiesDeps,
  tx: Queryable,
  account: AccountRef,
  provider: string,
  answer: ProviderAnswer,
  sealed: string | null,
  origin: RequestOrigin,
  createdAccount: boolean,
): Promise<void> {
  const identity = await insertIdentity(tx, {
    accountId: account.id,
    provider,
    subject: answer.subject,
    email: answer.email ?? null,
    refreshTokenSealed: sealed,
  });
  await deps.recordAudit(tx, {
    actor: { kind: 'account', id: account.id, label: account.email },
    action: 'auth.identity.linked',
    resource: { type: 'identity', id: identity.id },
    outcome: 'success',
    ...originOf(origin),
    metadata: { provider, created_account: createdAccount },
  });
}

/** The sign-in that started a link flow; undefined for a sign-in flow. */
const linkSignIn = (flow: Flow): SignInRef | undefined =>
  flow.linkAccountId ? { accountId: flow.linkAccountId, sessionId: flow.linkSessionId, tokenEpoch: flow.linkTokenEpoch ?? 0 } : undefined;

/** The account the answer signs in to: linked, found by its identity, or new for a new subject. */
async function settleAccount(
  deps: IdentitiesDeps,
  tx: Queryable,
  provider: string,
  link: SignInRef | undefined,
  answer: ProviderAnswer,
  sealed: string | null,
  origin: RequestOrigin,
): Promise<AccountRef> {
  await lockSubject(tx, provider, answer.subject);
  const existing = await findIdentityForUpdate(tx, provider, answer.subject);
  if (link) {
    // A link belongs to the sign-in that asked for it: held until commit, so a sign-out or lock waits for the link or ends it.
    const account = (await deps.accounts.holdSignIn(tx, link)) ? await deps.accounts.findById(tx, link.accountId) : undefined;
    if (!account) {
      throw new IdentityError('session_ended', 'The sign-in that started linking has ended (signed out, locked or deleted); sign in again and start over.');
    }
    if (existing && existing.accountId !== account.id) {
      throw new IdentityError('identity_in_use', `This ${provider} identity is linked to another account.`);
    }
    if (existing) {
      await recordSignIn(deps, tx, existing, answer, sealed);
    } else {
      await linkIdentity(deps, tx, account, provider, answer, sealed, origin, false);
    }
    return account;
  }
  if (existing) {
    await recordSignIn(deps, tx, existing, answer, sealed);
    return (await deps.accounts.findById(tx, existing.accountId))!;
  }
  if (!answer.email || !answer.emailVerified) {
    throw new IdentityError('provider_email_required', `A new account needs a verified email address from ${provider}.`);
  }
  if (await deps.accounts.findByEmail(tx, answer.email)) {
    // Never joined by email alone: the owner signs in and links the provider.
    throw new IdentityError('provider_link_required', `An account with this email exists; sign in to it and link ${provider}.`);
  }
  const account = await deps.accounts.create(tx, answer.email);
  await linkIdentity(deps, tx, account, provider, answer, sealed, origin, true);
  return account;
}

/**
 * The provider's redirect back: takes the flow this browser started (single use), exchanges the
 * code, then signs in the linked account, links the provider to the account that started the flow,
 * or creates an account for a new subject. A refresh token the sign-in could not keep is queued for
 * revocation.
 */
/** The callback's request: where it came from, and its Cookie header (the flow's browser binding). */
export type CallbackOrigin = RequestOrigin & { cookie: string };

export async function completeProviderFlow(deps: IdentitiesDeps, provider: string, query: CallbackQuery, origin: CallbackOrigin): Promise<TokenBody> {
  if (!deps.providers.spec(provider)) {
    throw new IdentityError('provider_not_found', `There is no identity provider ${provider}.`);
  }
  const flow = await takeBrowserFlow(deps, provider, query.state, origin.cookie);
  if (query.error !== undefined || query.code === undefined) {
    throw new IdentityError('provider_sign_in_failed', `The provider ${provider} did not grant the sign-in.`);
  }
  const answer = await exchangeCode(deps, provider, query, flow);
  const sealed = answer.refreshToken ? deps.box.seal(answer.refreshToken, tokenContext(provider, answer.subject)) : null;
  try {
    return await withTransaction(deps.pool, async (tx) => {
      const account = await settleAccount(deps, tx, provider, linkSignIn(flow), answer, sealed, originOf(origin));
      return deps.completeSignIn(tx, account, [`oidc:${provider}`], originOf(origin));
    });
  } catch (error) {
    // Kept nowhere, so revoked, even when its grant is shared with a linked identity's token: the service uses those only to revoke them.
    if (sealed) {
      await queueTokenRevocations(deps.pool, [{ provider, subject: answer.subject, tokenSealed: sealed }]);
    }
    throw error;
  }
}
