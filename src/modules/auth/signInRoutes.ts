import type { AuthRouteDeps } from './routeDeps.ts';
import { z } from 'zod';
import { unauthenticated } from '../../platform/http/errors.ts';
import { reply, routeDefiner } from '../../platform/http/route.ts';
import { refreshSession, signOut } from './sessions.ts';
import { signInWithPassword, signInWithSecondFactor } from './signIn.ts';
import { findTotp } from './store/mfa.ts';
import { findAccountById, listAccountRoles } from './store/accounts.ts';
import { loadAccountGrants } from './store/roles.ts';
import { effectivePermissions } from './permissions.ts';

export const Tokens = z.object({
  access_token: z.string(),
  token_type: z.literal('Bearer'),
  expires_in: z.number().int().describe('Seconds the access token is valid'),
  refresh_token: z.string().describe('Opaque, single use: POST /auth/token exchanges it for a new pair'),
});

const Challenge = z.object({
  challenge_token: z.string().describe('Single use, for POST /auth/sign-in/mfa: valid 5 minutes and for at most 5 attempts, then sign in again'),
  methods: z.array(z.string()),
  expires_in: z.number().int(),
});

const opaque = z.string().min(1).max(200);
export const secondFactorFields = {
  code: z.string().min(1).max(20).optional().describe('A current code of the authenticator app'),
  recovery_code: z.string().min(1).max(50).optional().describe('One of the recovery codes (each works once)'),
};
export const oneFactor = (body: { code?: string | undefined; recovery_code?: string | undefined }) =>
  (body.code === undefined) !== (body.recovery_code === undefined);
export const ONE_FACTOR = { message: 'send either code or recovery_code', path: ['code'] };

const defineRoute = routeDefiner<AuthRouteDeps>();

export const signInRoutes = [
  defineRoute({
    method: 'POST',
    path: '/auth/sign-in',
    tag: 'auth',
    summary: 'Sign in with email and password',
    description: 'Tokens (200), or a challenge for the second step (202) when the account has two-factor sign-in on.',
    body: z.object({ email: z.string().min(1).max(254), password: z.string().min(1).max(1024) }),
    responses: { 200: Tokens, 202: Challenge },
    problems: ['invalid_email', 'invalid_credentials', 'account_locked', 'too_many_attempts', 'rate_limited'],
    handler: async ({ body, origin, deps }) => {
      const { result, headers } = await signInWithPassword(deps.signIn, body, origin);
      return reply(result, { status: 'challenge_token' in result ? 202 : 200, headers });
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/auth/sign-in/mfa',
    tag: 'auth',
    summary: 'Finish a sign-in with an authenticator code or a recovery code',
    body: z.object({ challenge_token: opaque, ...secondFactorFields }).refine(oneFactor, ONE_FACTOR),
    responses: { 200: Tokens },
    problems: ['invalid_challenge', 'invalid_mfa', 'account_locked', 'too_many_attempts', 'rate_limited'],
    handler: async ({ body, origin, deps }) => {
      const { result, headers } = await signInWithSecondFactor(deps.signIn, body, origin);
      return reply(result, { headers });
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/auth/token',
    tag: 'auth',
    summary: 'Exchange a refresh token for a new pair (rotation)',
    description: 'A refresh token works once; presenting a used one again revokes every token of its sign-in.',
    body: z.object({ refresh_token: opaque }),
    responses: { 200: Tokens },
    problems: ['invalid_refresh_token', 'rate_limited'],
    handler: ({ body, origin, deps }) => refreshSession(deps.signIn.pool, deps.signIn, body.refresh_token, origin),
  }),
  defineRoute({
    method: 'POST',
    path: '/auth/sign-out',
    auth: 'bearer',
    tag: 'auth',
    summary: 'Sign out: revoke the session of the refresh token, or else of this access token',
    body: z.object({ refresh_token: opaque.optional() }),
    status: 204,
    responses: { 204: null },
    problems: ['invalid_refresh_token'],
    handler: async ({ body, caller, deps }) => {
      await signOut(deps.signIn.pool, deps.signIn, body.refresh_token, caller);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/auth/me',
    auth: 'bearer',
    tag: 'auth',
    summary: 'The signed-in account and how this token was obtained',
    responses: {
      200: z.object({
        id: z.string(),
        email: z.string(),
        roles: z.array(z.string()),
        permissions: z.array(z.string()).describe('Permissions its roles grant (ops ones also need a second factor while auth.ops_require_mfa is on)'),
        methods: z.array(z.string()),
        totp_enabled: z.boolean(),
      }),
    },
    handler: async ({ caller: { actor }, deps }) => {
      const [account, roles, entries, totp] = await Promise.all([
        findAccountById(deps.signIn.pool, actor.id),
        listAccountRoles(deps.signIn.pool, actor.id),
        loadAccountGrants(deps.signIn.pool, actor.id),
        findTotp(deps.signIn.pool, actor.id),
      ]);
      // Deleted or locked within the second before every instance knows it (ADR 0064).
      if (!account || account.lockedAt) {
        throw unauthenticated('The session or the account of this token has ended.');
      }
      const permissions = effectivePermissions(entries);
      return { id: actor.id, email: account.email, roles, permissions, methods: actor.methods, totp_enabled: totp?.confirmed ?? false };
    },
  }),
];
