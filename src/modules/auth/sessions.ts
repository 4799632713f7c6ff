import type pg from 'pg';
import type { Queryable } from '../../platform/db/pool.ts';
import { withTransaction } from '../../platform/db/transaction.ts';
import { normaliseAddress } from '../../platform/addresses.ts';
import type { RecordAudit } from '../../platform/audit.ts';
import { type Caller, type RequestOrigin, actorRef, originOf } from '../../platform/caller.ts';
import { issueAccessToken } from './accessTokens.ts';
import { AuthError } from './errors.ts';
import { newOpaqueToken, tokenHash } from './opaqueTokens.ts';
import type { SigningKey } from './signingKeys.ts';
import {
  findAccountSessionByToken,
  findAccountSessionFamily,
  findFamilyByToken,
  insertSession,
  lockSessionByToken,
  lockSessionFamily,
  markSessionRotated,
  revokeSessionFamily,
} from './store/sessions.ts';

export const ACCESS_TOKEN_TTL_SECONDS = 15 * 60;
export const REFRESH_TOKEN_TTL_SECONDS = 30 * 24 * 3600;

export interface SignedIn {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
}

export interface SessionDeps {
  signingKey: SigningKey;
}

const clientIp = (address: string) => normaliseAddress(address) ?? null;

async function openSession(
  tx: Queryable,
  deps: SessionDeps,
  account: { id: string; email: string },
  methods: string[],
  origin: Pick<RequestOrigin, 'clientAddress' | 'userAgent'>,
  family: { id: string; tokenEpoch: number } | null,
): Promise<SignedIn> {
  const refreshToken = newOpaqueToken();
  const session = await insertSession(tx, {
    accountId: account.id,
    tokenHash: tokenHash(refreshToken),
    familyId: family?.id ?? null,
    tokenEpoch: family?.tokenEpoch ?? null,
    methods,
    ttlSeconds: REFRESH_TOKEN_TTL_SECONDS,
    userAgent: origin.userAgent.slice(0, 500),
    clientIp: clientIp(origin.clientAddress),
  });
  if (!session) {
    throw new AuthError('account_locked', 'The account is locked or no longer exists.');
  }
  const claims = { accountId: account.id, email: account.email, methods, sessionId: session.id, tokenEpoch: session.tokenEpoch };
  const access = await issueAccessToken(deps.signingKey, claims, ACCESS_TOKEN_TTL_SECONDS);
  return { access_token: access.token, token_type: 'Bearer', expires_in: access.expiresIn, refresh_token: refreshToken };
}

/**
 * Ends a successful sign-in (password, second factor, or a third-party provider): opens a session
 * in the caller's transaction and issues its refresh and access tokens.
 */
export function completeSignIn(
  tx: Queryable,
  deps: SessionDeps,
  account: { id: string; email: string },
  methods: string[],
  origin: Pick<RequestOrigin, 'clientAddress' | 'userAgent'>,
): Promise<SignedIn> {
  return openSession(tx, deps, account, methods, origin, null);
}

/**
 * Rotates a refresh token: the presented one is marked rotated and a new one joins its family.
 * A token presented again after rotation means it leaked: the whole family is revoked.
 */
export async function refreshSession(
  pool: pg.Pool,
  deps: SessionDeps & { recordAudit: RecordAudit },
  refreshToken: string,
  origin: RequestOrigin,
): Promise<SignedIn> {
  const outcome = await withTransaction(pool, async (tx) => {
    const familyId = await findFamilyByToken(tx, tokenHash(refreshToken));
    if (!familyId) {
      return undefined;
    }
    await lockSessionFamily(tx, familyId);
    const session = await lockSessionByToken(tx, tokenHash(refreshToken));
    if (!session) {
      return undefined;
    }
    if (session.rotated) {
      const revoked = await revokeSessionFamily(tx, session.family_id);
      await deps.recordAudit(tx, {
        ...originOf(origin),
        action: 'auth.session.reuse_detected',
        actor: { kind: 'account', id: session.account_id, label: session.email },
        resource: { type: 'account', id: session.account_id },
        outcome: 'denied',
        metadata: { family_id: session.family_id, sessions_revoked: revoked },
      });
      return undefined;
    }
    if (!session.usable) {
      return undefined;
    }
    await markSessionRotated(tx, session.id);
    const family = { id: session.family_id, tokenEpoch: session.token_epoch };
    return openSession(tx, deps, { id: session.account_id, email: session.email }, session.methods, origin, family);
  }).catch((error: unknown) => {
    // Locked, deleted, or locked and unlocked since the session was read: rolled back, and the token is no longer usable.
    if (error instanceof AuthError && error.code === 'account_locked') {
      return undefined;
    }
    throw error;
  });
  if (!outcome) {
    throw new AuthError('invalid_refresh_token', 'The refresh token is unknown, expired, revoked or already used.');
  }
  return outcome;
}

/**
 * Signs out: revokes the session family of the given refresh token (it must be the caller's), or
 * else the session the access token came from.
 */
export async function signOut(pool: pg.Pool, deps: { recordAudit: RecordAudit }, refreshToken: string | undefined, caller: Caller): Promise<void> {
  const { actor } = caller;
  await withTransaction(pool, async (tx) => {
    const sessionId = refreshToken ? await findAccountSessionByToken(tx, actor.id, tokenHash(refreshToken)) : actor.sessionId;
    if (refreshToken && !sessionId) {
      throw new AuthError('invalid_refresh_token', 'The refresh token is not one of this account.');
    }
    const familyId = sessionId ? await findAccountSessionFamily(tx, actor.id, sessionId) : undefined;
    if (familyId) {
      await lockSessionFamily(tx, familyId);
    }
    const revoked = familyId ? await revokeSessionFamily(tx, familyId) : 0;
    await deps.recordAudit(tx, {
      ...originOf(caller),
      action: 'auth.signed_out',
      actor: actorRef(actor),
      resource: { type: 'account', id: actor.id },
      outcome: 'success',
      metadata: { sessions_revoked: revoked },
    });
  });
}
