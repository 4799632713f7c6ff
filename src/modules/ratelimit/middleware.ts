import type { Context, Next } from 'koa';
import { DatabaseUnavailableError, currentDatabaseDeadline } from '../../platform/db/deadline.ts';
import { type RateLimitError, rateLimited, tooManyAttempts } from './errors.ts';
import { rateLimitHeaders } from './headers.ts';
import type { RateLimiter } from './limiter.ts';
import { type LimiterName, addressKey } from './limiters.ts';
import type { Decision } from './rules.ts';

// Matched case-insensitively, as the router matches paths.
const AUTH_PATH = /^\/auth(?:\/|$)/i;
const PROVIDER_REDIRECT = /^\/auth\/providers\/[^/]+\/(start|callback)\/?$/i;
// A sign-out needs a valid access token, so it guesses nothing; refused, it would leave the session alive.
const SIGN_OUT = /^\/auth\/sign-out\/?$/i;

/** Requests the per-address limit counts: every change under /auth but a sign-out, and the provider redirects. */
export function countsPerAddress(method: string, path: string): boolean {
  if (!AUTH_PATH.test(path) || SIGN_OUT.test(path)) {
    return false;
  }
  return (method !== 'GET' && method !== 'HEAD') || PROVIDER_REDIRECT.test(path);
}

/**
 * The per-address refusal of a request whose client is known to be over its budget, decided from
 * memory alone (no budget spent, no database), for answering it before the HTTP framework; any
 * other request is left to the middleware below.
 */
export function refuseKnownFloods(limiter: RateLimiter<LimiterName>) {
  return (request: { method: string; path: string; clientAddress: string }): RateLimitError | undefined => {
    if (!countsPerAddress(request.method, request.path)) {
      return undefined;
    }
    const decision = limiter.refusedFromMemory('auth_ip', addressKey(request.clientAddress));
    return decision ? rateLimited('auth_ip', decision) : undefined;
  };
}

/**
 * The per-address limit (auth_ip), before routing: a counted request over the budget is 429
 * rate_limited with Retry-After; every counted answer carries the RateLimit fields.
 */
export function limitRequestsPerAddress(limiter: RateLimiter<LimiterName>) {
  // Only counted requests enter an async function: the others pass on without a promise of their own.
  return function limitPerAddress(ctx: Context, next: Next): Promise<void> {
    return countsPerAddress(ctx.method, ctx.path) ? decide(ctx, next) : next();
  };

  async function decide(ctx: Context, next: Next): Promise<void> {
    // The request's one deadline, from its arrival (the request frame): the decision's wait ends there too.
    const by = ctx.state.deadlineAt as number | undefined;
    const decision = await limiter.take('auth_ip', addressKey(ctx.state.clientAddress as string), by);
    if (!decision.allowed) {
      throw refusal(decision, () => rateLimited('auth_ip', decision), by);
    }
    ctx.set(rateLimitHeaders('auth_ip', decision));
    await next();
  }
}

/** One attempt spent: the RateLimit fields to answer with, or the refusal to answer instead. */
export type SpentAttempt = { allowed: true; headers: Record<string, string> } | { allowed: false; refusal: Error; overLimit: boolean };

/**
 * Spends one sign-in (auth_login) or two-factor change (auth_mfa) attempt. Refused, it is 429
 * too_many_attempts when the client is over its budget, 503 when no instance could decide.
 */
export async function spendAttempt(limiter: RateLimiter<LimiterName>, name: Exclude<LimiterName, 'auth_ip'>, key: string): Promise<SpentAttempt> {
  // Spent inside a route: the router's deadline, counted from the request's arrival, bounds the wait.
  const by = currentDatabaseDeadline()?.at;
  const decision = await limiter.take(name, key, by);
  if (!decision.allowed) {
    return { allowed: false, refusal: refusal(decision, () => tooManyAttempts(name, decision), by), overLimit: !decision.undecided };
  }
  return { allowed: true, headers: rateLimitHeaders(name, decision) };
}

// A refusal for want of a share or of time is the database's absence, not the client's doing: 503, not 429.
function refusal(decision: Decision, overLimit: () => RateLimitError, by = Infinity): Error {
  if (!decision.undecided) {
    return overLimit();
  }
  return new DatabaseUnavailableError(by <= performance.now() ? 'deadline' : 'ratelimit_undecided');
}
