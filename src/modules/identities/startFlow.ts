import * as oidc from 'openid-client';
import { type IdentitiesDeps, redirectUri } from './deps.ts';
import { IdentityError } from './errors.ts';
import { browserHash, flowCookie, newBrowserSecret, setFlowCookie } from './flowCookie.ts';
import { FLOW_LIFETIME_SECONDS, deleteExpiredFlows, insertFlow } from './store/flows.ts';

export interface StartedFlow {
  /** The provider's authorization URL. */
  location: URL;
  /** The Set-Cookie value binding the flow to this browser. */
  cookie: string;
}

/**
 * Starts a sign-in with a provider: a fresh state, nonce and PKCE verifier kept for 10 minutes,
 * bound to this browser by a cookie, and the provider's authorization URL. With a valid bearer
 * token the flow links the provider to that account instead of signing in, and belongs to that
 * token's sign-in: the callback links nothing once it has ended.
 */
export async function startProviderFlow(deps: IdentitiesDeps, provider: string, authorization: string): Promise<StartedFlow> {
  const spec = deps.providers.spec(provider);
  if (!spec) {
    throw new IdentityError('provider_not_found', `There is no identity provider ${provider}.`);
  }
  const linkAccount = authorization ? await deps.identifyCaller(authorization) : undefined;
  const configuration = await deps.providers.configuration(provider);

  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const codeVerifier = oidc.randomPKCECodeVerifier();
  const browserSecret = newBrowserSecret();
  await deleteExpiredFlows(deps.pool, 100);
  const link = { linkAccountId: linkAccount?.id ?? null, linkSessionId: linkAccount?.sessionId ?? null, linkTokenEpoch: linkAccount?.tokenEpoch ?? null };
  await insertFlow(deps.pool, { state, provider, codeVerifier, nonce, ...link }, browserHash(browserSecret));
  const location = oidc.buildAuthorizationUrl(configuration, {
    ...spec.authorizationParams,
    redirect_uri: redirectUri(deps, provider),
    scope: spec.scopes.join(' '),
    state,
    nonce,
    code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: 'S256',
  });
  return { location, cookie: setFlowCookie(flowCookie(deps.publicUrl), browserSecret, FLOW_LIFETIME_SECONDS) };
}
