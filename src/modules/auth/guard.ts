import type { Context } from 'koa';
import { AppError, forbidden, unauthenticated } from '../../platform/http/errors.ts';
import type { Actor } from '../../platform/http/route.ts';
import type { RouteGuard } from '../../platform/http/router.ts';
import type { AccessTokenClaims, VerifyFailure } from './accessTokens.ts';
import type { GrantsCache } from './grantsCache.ts';

const BEARER = /^Bearer ([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)$/;
/** Sign-in methods that prove a second factor; `cli` tokens come from an operator at the database. */
const SECOND_FACTORS = new Set(['otp', 'recovery', 'cli']);

/** The `auth.ops_require_mfa` setting, read from memory on every check. */
export interface OpsMfaPolicy {
  opsRequireMfa(): boolean;
}

/** Bearer authentication from the token alone, and authorisation from the in-memory grants. */
export function createRouteGuard(
  verify: (token: string) => Promise<AccessTokenClaims | VerifyFailure>,
  grantsCache: GrantsCache,
  mfaPolicy: OpsMfaPolicy,
): RouteGuard {
  return {
    async authenticate(ctx: Context): Promise<Actor> {
      const header = ctx.get('Authorization');
      if (!header) {
        throw unauthenticated('The Authorization header with a bearer token is missing.');
      }
      const match = BEARER.exec(header.trim());
      if (!match) {
        throw unauthenticated('The Authorization header is not a bearer token.');
      }
      const claims = await verify(match[1]!);
      if (claims === 'expired') {
        throw unauthenticated('The bearer token has expired.');
      }
      if (claims === 'invalid') {
        throw unauthenticated('The bearer token is not valid.');
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
