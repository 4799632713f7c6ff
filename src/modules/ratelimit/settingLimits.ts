import type { authSettings } from '../auth/index.ts';
import type { SettingsReader } from '../settings/index.ts';
import { LIMITER_NAMES, type RateLimitSettings } from './limiters.ts';

/**
 * The limits the limiters read on every decision, from the runtime settings in memory: a change
 * applies to the next request.
 */
export function settingsRateLimits(settings: SettingsReader<(typeof authSettings)[number]>): RateLimitSettings {
  const limits: RateLimitSettings = {
    auth_ip: () => ({ limit: settings.integer('auth.ip_requests_per_minute'), periodSeconds: 60 }),
    auth_login: () => ({ limit: settings.integer('auth.login_attempts'), periodSeconds: settings.duration('auth.login_window') }),
    auth_login_address: () => ({ limit: settings.integer('auth.login_address_attempts'), periodSeconds: settings.duration('auth.login_window') }),
    auth_mfa: () => ({ limit: settings.integer('auth.mfa_change_attempts'), periodSeconds: settings.duration('auth.login_window') }),
  };
  if (Object.keys(limits).length !== LIMITER_NAMES.length) {
    throw new Error('every limiter needs its setting');
  }
  return limits;
}
