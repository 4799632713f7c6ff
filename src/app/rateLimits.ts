import { DEFAULT_RATE_LIMITS, LIMITER_NAMES, type RateLimitSettings } from '../modules/ratelimit/index.ts';

/** Connections each instance reserves for rate-limit decisions: the statements it keeps in flight. */
export const RATE_LIMIT_CONNECTIONS = 4;

/** The limits behind the port the limiters read on every decision: the seed's defaults, for now. */
export function defaultRateLimitSettings(): RateLimitSettings {
  return Object.fromEntries(LIMITER_NAMES.map((name) => [name, () => DEFAULT_RATE_LIMITS[name]])) as RateLimitSettings;
}
