import { withHeaders } from '../../platform/errors.ts';
import { reply, routeDefiner } from '../../platform/http/route.ts';
import { completeProviderFlow } from './callback.ts';
import type { IdentitiesDeps } from './deps.ts';
import { clearFlowCookie, flowCookie } from './flowCookie.ts';
import { CallbackQuery, ProviderParams, TokenBody } from './schemas.ts';
import { startProviderFlow } from './startFlow.ts';
import { deleteOwnAccount, unlinkProvider } from './unlink.ts';

const defineRoute = routeDefiner<IdentitiesDeps>();

export const identitiesRoutes = [
  defineRoute({
    method: 'GET',
    path: '/auth/providers/{provider}/start',
    tag: 'auth',
    summary: 'Start signing in with an OpenID Connect provider (302 to the provider)',
    description:
      'Redirects to the provider with a fresh state, nonce and PKCE challenge, valid once for 10 minutes, and sets an HttpOnly, SameSite=Lax cookie ' +
      '(`__Host-backplane_oidc_flow`, Secure, when APP_PUBLIC_URL is https; `backplane_oidc_flow` otherwise) that binds the flow to this browser: ' +
      'only a callback carrying it can complete the flow. A later start in the same browser replaces the cookie, so only the latest flow can complete. ' +
      'With a valid bearer token the flow links the provider to that account instead of signing in; an invalid one is refused (401). ' +
      "A link belongs to the token's sign-in: if its session was signed out or revoked, or the account locked or deleted, before the callback, the callback links nothing (401 `session_ended`).",
    params: ProviderParams,
    status: 302,
    responses: { 302: null },
    problems: ['provider_not_found', 'provider_unavailable', 'unauthenticated'],
    handler: async ({ params, header, deps }) => {
      const started = await startProviderFlow(deps, params.provider, header('Authorization'));
      return reply(undefined, { headers: { 'Cache-Control': 'no-store', 'Set-Cookie': started.cookie, Location: started.location.href } });
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/auth/providers/{provider}/callback',
    tag: 'auth',
    summary: "The provider's redirect back: signs in, links, or creates the account",
    description:
      'Signs in the account linked to the subject, links the provider to the account that started the flow, or creates an account for a new subject ' +
      '(which needs a verified email that no account uses). Answers with the same token body as `POST /auth/sign-in`. ' +
      "Only the browser that started the flow can complete it: without its cookie (or with another browser's) the answer is 401 `invalid_state` and nothing changes. " +
      'Every answer clears the cookie. A refresh token that replaces the stored one queues the old one for revocation in the same transaction; ' +
      'a refresh token the sign-in cannot keep (refused, or linked to another account) is queued too.',
    params: ProviderParams,
    query: CallbackQuery,
    responses: { 200: TokenBody },
    problems: [
      'provider_not_found',
      'invalid_state',
      'session_ended',
      'provider_sign_in_failed',
      'provider_email_required',
      'provider_link_required',
      'identity_in_use',
      'provider_already_linked',
      'provider_unavailable',
    ],
    handler: async ({ params, query, origin, header, deps }) => {
      const headers = { 'Cache-Control': 'no-store', 'Set-Cookie': clearFlowCookie(flowCookie(deps.publicUrl)) };
      try {
        return reply(await completeProviderFlow(deps, params.provider, query, { ...origin, cookie: header('Cookie') }), { headers });
      } catch (error) {
        // A flow's cookie is good for one callback, whatever its outcome: refusals clear it too.
        throw withHeaders(error, headers);
      }
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/auth/identities/{provider}',
    auth: 'bearer',
    tag: 'auth',
    summary: "Unlink the caller's identity at a provider",
    description:
      "Refused with 409 `last_sign_in_method` when nothing else could sign in to the account. The provider's refresh token is queued for revocation " +
      'by the job `auth_revoke_tokens` in the same transaction; the answer never waits for the provider. Audited as `auth.identity.unlinked`.',
    params: ProviderParams,
    status: 204,
    responses: { 204: null },
    problems: ['identity_not_found', 'last_sign_in_method'],
    handler: ({ params, caller, deps }) => unlinkProvider(deps, params.provider, caller),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/auth/account',
    auth: 'bearer',
    tag: 'auth',
    summary: "Delete the caller's account at once",
    description:
      "Its providers' refresh tokens are queued for revocation by the job `auth_revoke_tokens` in the same transaction; the answer never waits " +
      'for a provider, even one that is down. Audited as `auth.account.deleted`.',
    status: 204,
    responses: { 204: null },
    problems: ['account_not_found'],
    handler: ({ caller, deps }) => deleteOwnAccount(deps, caller),
  }),
];
