import { booleanSetting, durationSetting, integerSetting } from '../../platform/settingDeclarations.ts';

/** The auth module's runtime settings. Names are public API: add, never rename. */
export const authSettings = [
  integerSetting({
    name: 'auth.login_attempts',
    group: 'rate_limits',
    description: 'Sign-in attempts allowed per address within auth.login_window, counted across every instance',
    default: 10,
    min: 3,
    max: 100,
  }),
  integerSetting({
    name: 'auth.login_address_attempts',
    group: 'rate_limits',
    description: 'Sign-in attempts (password or second factor) allowed per email within auth.login_window, from every network together',
    default: 50,
    min: 10,
    max: 1000,
  }),
  durationSetting({
    name: 'auth.login_window',
    group: 'rate_limits',
    description: 'Window of the sign-in and two-factor change limits',
    default: '15m',
    min: '1m',
    max: '24h',
  }),
  integerSetting({
    name: 'auth.ip_requests_per_minute',
    group: 'rate_limits',
    description: 'Requests to the sign-in routes per client address per minute, counted across every instance',
    default: 60,
    min: 10,
    max: 10_000,
  }),
  integerSetting({
    name: 'auth.mfa_change_attempts',
    group: 'rate_limits',
    description: 'Two-factor change attempts allowed per account within auth.login_window',
    default: 10,
    min: 3,
    max: 100,
  }),
  booleanSetting({
    name: 'auth.ops_require_mfa',
    group: 'security',
    description: 'Ops permissions need a token whose sign-in used a second factor (or one from `backplane token issue`)',
    default: true,
  }),
] as const;
