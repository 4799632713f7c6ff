import { DEFAULT_RATE_LIMITS, LIMITER_NAMES, type RateLimit, type RateLimitSettings } from '../../src/modules/ratelimit/index.ts';

/** Limits fixed by a test (the seed's defaults unless overridden), instead of the runtime settings. */
export function fixedRateLimits(overrides: Partial<Record<keyof RateLimitSettings, () => RateLimit>> = {}): RateLimitSettings {
  const defaults = Object.fromEntries(LIMITER_NAMES.map((name) => [name, () => DEFAULT_RATE_LIMITS[name]])) as RateLimitSettings;
  return { ...defaults, ...overrides };
}
