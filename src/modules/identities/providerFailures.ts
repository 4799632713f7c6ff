// What went wrong in an exchange with a provider, as a short code: never the provider's text
// (an error description may quote anything) and never a token.
const OAUTH_ERROR = /^[a-z][a-z0-9_]{0,63}$/;
const NETWORK_CODE = /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|EPIPE|UND_ERR_[A-Z_]{1,40})$/;
// openid-client's own checks (ID token claims, state, issuer...).
const CHECK_CODE = /^OAUTH_[A-Z_]{1,60}$/;

/** Reduces whatever a request to a provider threw to a code safe to store, log and show. */
export function describeProviderFailure(error: unknown): string {
  const chain: unknown[] = [];
  for (let current: unknown = error; current && chain.length < 5; current = (current as { cause?: unknown }).cause) {
    chain.push(current);
  }
  if (chain.some((e) => ['TimeoutError', 'AbortError'].includes((e as Error).name))) {
    return 'timeout';
  }
  for (const e of chain) {
    const status = (e as { status?: unknown }).status;
    if (typeof status === 'number') {
      const oauth = (e as { error?: unknown }).error;
      return typeof oauth === 'string' && OAUTH_ERROR.test(oauth) ? `http_${status}:${oauth}` : `http_${status}`;
    }
  }
  const network = chain.map((e) => (e as { code?: unknown }).code).find((code) => typeof code === 'string' && NETWORK_CODE.test(code));
  if (network) {
    return `network_error:${String(network)}`;
  }
  const check = chain.map((e) => (e as { code?: unknown }).code).find((code) => typeof code === 'string' && CHECK_CODE.test(code));
  if (check) {
    return `check_failed:${String(check).toLowerCase()}`;
  }
  return chain.some((e) => e instanceof TypeError) ? 'network_error' : 'provider_error';
}

/** The provider could not answer (network, timeout, 5xx), as opposed to refusing the request. */
export function isProviderOutage(failure: string): boolean {
  return failure === 'timeout' || failure.startsWith('network_error') || /^http_5\d\d/.test(failure);
}
