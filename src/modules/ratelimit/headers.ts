import type { Decision } from './rules.ts';

export type RateLimitHeaderValues = Record<'RateLimit-Policy' | 'RateLimit', string>;

/** Whole seconds a refused client should wait: rounded up, at least 1. */
export function retryAfterSeconds(decision: Decision): number {
  return Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
}

/**
 * The IETF RateLimit fields (draft-ietf-httpapi-ratelimit-headers-11): a policy item named after
 * the limiter with its quota `q` and window `w`, and the current state: remaining `r` and `t`, the
 * seconds until more quota is available (omitted while the bucket is full).
 */
export function rateLimitHeaders(policy: string, decision: Decision): RateLimitHeaderValues {
  const window = Math.max(1, Math.ceil(decision.limit.periodSeconds));
  const wait = decision.allowed ? Math.ceil(decision.nextUnitMs / 1000) : retryAfterSeconds(decision);
  return {
    'RateLimit-Policy': `"${policy}";q=${decision.limit.limit};w=${window}`,
    RateLimit: `"${policy}";r=${decision.remaining}${wait > 0 ? `;t=${wait}` : ''}`,
  };
}

/** Headers of a refusal: the RateLimit fields and Retry-After. */
export function refusalHeaders(policy: string, decision: Decision): Record<string, string> {
  return { ...rateLimitHeaders(policy, decision), 'Retry-After': String(retryAfterSeconds(decision)) };
}

/** The fields of several policies that all admitted one request, as the lists the draft allows (in the order checked). */
export function joinRateLimitHeaders(...each: Array<Record<string, string>>): Record<string, string> {
  const joined: Record<string, string> = {};
  for (const headers of each) {
    for (const [name, value] of Object.entries(headers)) {
      joined[name] = joined[name] === undefined ? value : `${joined[name]}, ${value}`;
    }
  }
  return joined;
}
