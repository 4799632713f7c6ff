import type { Context } from 'koa';
import { AppError } from '../../platform/errors.ts';
import { forbidden, unauthenticated } from '../../platform/http/errors.ts';
import type { Actor } from '../../platform/caller.ts';
import type { RouteGuard } from '../../platform/http/router.ts';
import type { AccessRevocations } from './accessRevocations.ts';
import type { VerifiedClaims, VerifyFailure } from './accessTokens.ts';
import type { GrantsCache } from './grantsCache.ts';
import type { Queryable } from '../../platform/db/pool.ts';
import { findAccountById } from './store/accounts.ts';
import { isSessionEnded } from './store/sessions.ts';

// RFC 9110 section 11.1: the scheme is case-insensitive; one or more spaces before the credentials.
const BEARER = /^Bearer +([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)$/i;

/** The compact JWT of an `Authorization: Bearer …` header, or undefined when it is not one. */
export function bearerToken(header: string): string | undefined {
  return BEARER.exec(header.trim())?.[1];
}
type Verify = (token: string) => Promise<VerifiedClaims | VerifyFailure>;

/** The claims of an `Authorization` header's bearer token; 401 naming what is wrong otherwise. */
async function verifyBearer(header: string, verify: Verify): Promise<VerifiedClaims> {
  if (!header) {
    throw unauthenticated('The Authorization header with a bearer token is missing.');
  }
  const token = bearerToken(header);
  if (!token) {
    throw unauthenticated('The Authorization header is not a bearer token.');
  }
  const claims = await verify(token);
  if (claims === 'expired') {
    throw unauthenticated('The bearer token has expired.');
  }
  if (claims === 'invalid') {
    throw unauthenticated('The bearer token is not valid.');
  }
  return claims;
}

/**
 * The account of a bearer header on a public route that may carry one (linking a provider): the
 * guard's check, then the account and session read from the database, since linking is rare.
 */
export function identifyBearer(db: Queryable, verify: Verify) {
  return async (header: string): Promise<{ id: string; email: string; accountId: string; sessionId: string | null; tokenEpoch: number }> => {
    let claims: VerifiedClaims;
    try {
      claims = await verifyBearer(header, verify);
    } catch {
      throw unauthenticated('The bearer token is not valid; sign in again to link a provider.');
    }
    const account = await findAccountById(db, claims.accountId);
    const ended = !account || account.lockedAt || claims.tokenEpoch < account.tokenEpoch;
    if (ended || (claims.sessionId !== undefined && (await isSessionEnded(db, claims.sessionId)))) {
      throw unauthenticated('The bearer token names an account or a session that has ended; sign in again to link a provider.');
    }
    return { id: account.id, email: account.email, accountId: account.id, sessionId: claims.sessionId ?? null, tokenEpoch: claims.tokenEpoch };
  };
}

/** Sign-in methods that prove a second factor; `cli` tokens come from an operator at the database. */
const SECOND_FACTORS = new Set(['otp', 'recovery', 'cli']);

/** The `auth.ops_require_mfa` setting, read from memory on every check. */
export interface OpsMfaPolicy {
  opsRequireMfa(): boolean;
}

/**
 * Bearer authentication from the token and the in-memory revocations (no query), and authorisation
 * from the in-memory grants.
 */
export function createRouteGuard(verify: Verify, grantsCache: GrantsCache, mfaPolicy: OpsMfaPolicy, revocations: Pick<AccessRevocations, 'ended'>): RouteGuard {
  return {
    async authenticate(ctx: Context): Promise<Actor> {
      const claims = await verifyBearer(ctx.get('Authorization'), verify);
      if (revocations.ended(claims)) {
        throw unauthenticated('The session or the account of this token has ended.');
      }
      return { kind: 'account', id: claims.accountId, label: claims.email, methods: claims.methods, sessionId: claims.sessionId };
    },
    async authorize(actor: Actor, permission: string): Promise<void> {
      if (!(await grantsCache.confirm(actor.id, permission))) {
        throw forbidden(`The account lacks the permission ${permission}.`);
      }
      if (permission.startsWith('ops.') && mfaPolicy.opsRequireMfa() && !actor.methods.some((method) => SECOND_FACTORS.has(method))) {
        throw new AppError('mfa_required', 'Ops permissions need a sign-in with a second factor (auth.ops_require_mfa is on).');
      }
    },
  };
}
