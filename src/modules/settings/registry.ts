import { durationSeconds } from '../../platform/durations.ts';

export type SettingKind = 'integer' | 'boolean' | 'duration' | 'string';

interface Common<N extends string> {
  name: N;
  group: string;
  description: string;
}

export interface IntegerSetting<N extends string = string> extends Common<N> {
  kind: 'integer';
  default: number;
  min: number;
  max: number;
}

export interface BooleanSetting<N extends string = string> extends Common<N> {
  kind: 'boolean';
  default: boolean;
}

/** Held in whole seconds; travels as a Go duration string ("15m", "87600h"). */
export interface DurationSetting<N extends string = string> extends Common<N> {
  kind: 'duration';
  default: number;
  min: number;
  max: number;
}

export interface StringSetting<N extends string = string> extends Common<N> {
  kind: 'string';
  default: string;
  maxLength: number;
}

export type SettingDefinition = IntegerSetting | BooleanSetting | DurationSetting | StringSetting;

function seconds(text: string): number {
  const value = durationSeconds(text);
  if (value === undefined) {
    throw new Error(`setting declaration: ${text} is not a duration in whole seconds`);
  }
  return value;
}

const integer = <N extends string>(d: Omit<IntegerSetting<N>, 'kind'>): IntegerSetting<N> => ({ kind: 'integer', ...d });
const boolean = <N extends string>(d: Omit<BooleanSetting<N>, 'kind'>): BooleanSetting<N> => ({ kind: 'boolean', ...d });
const string = <N extends string>(d: Omit<StringSetting<N>, 'kind'>): StringSetting<N> => ({ kind: 'string', ...d });
const duration = <N extends string>(d: Common<N> & { default: string; min: string; max: string }): DurationSetting<N> => ({
  kind: 'duration',
  name: d.name,
  group: d.group,
  description: d.description,
  default: seconds(d.default),
  min: seconds(d.min),
  max: seconds(d.max),
});

/** Every runtime setting. Names are public API: add, never rename. */
export const SETTINGS = [
  integer({
    name: 'auth.login_attempts',
    group: 'rate_limits',
    description: 'Sign-in attempts allowed per address within auth.login_window, counted across every instance',
    default: 10,
    min: 3,
    max: 100,
  }),
  integer({
    name: 'auth.login_address_attempts',
    group: 'rate_limits',
    description: 'Sign-in attempts (password or second factor) allowed per email within auth.login_window, from every network together',
    default: 50,
    min: 10,
    max: 1000,
  }),
  duration({
    name: 'auth.login_window',
    group: 'rate_limits',
    description: 'Window of the sign-in and two-factor change limits',
    default: '15m',
    min: '1m',
    max: '24h',
  }),
  integer({
    name: 'auth.ip_requests_per_minute',
    group: 'rate_limits',
    description: 'Requests to the sign-in routes per client address per minute, counted across every instance',
    default: 60,
    min: 10,
    max: 10_000,
  }),
  integer({
    name: 'auth.mfa_change_attempts',
    group: 'rate_limits',
    description: 'Two-factor change attempts allowed per account within auth.login_window',
    default: 10,
    min: 3,
    max: 100,
  }),
  boolean({
    name: 'auth.ops_require_mfa',
    group: 'security',
    description: 'Ops permissions need a token whose sign-in used a second factor (or one from `backplane token issue`)',
    default: true,
  }),
  duration({
    name: 'audit.retention',
    group: 'retention',
    description: 'Age after which the daily retention job deletes audit events',
    default: '8760h',
    min: '720h',
    max: '87600h',
  }),
  duration({
    name: 'ops.history_retention',
    group: 'retention',
    description: 'Age after which the daily retention job deletes settings and job configuration history',
    default: '8760h',
    min: '720h',
    max: '87600h',
  }),
  duration({
    name: 'releases.instance_retention',
    group: 'retention',
    description: 'Age after which records of stopped instances are deleted',
    default: '2160h',
    min: '24h',
    max: '26280h',
  }),
  boolean({
    name: 'maintenance.enabled',
    group: 'maintenance',
    description: 'Maintenance mode: every route but health, docs, ops and sign-in answers 503 `maintenance`',
    default: false,
  }),
  string({
    name: 'maintenance.message',
    group: 'maintenance',
    description: 'The `detail` of maintenance answers; empty means a default sentence',
    default: '',
    maxLength: 500,
  }),
  duration({
    name: 'maintenance.retry_after',
    group: 'maintenance',
    description: 'The Retry-After of maintenance answers',
    default: '5m',
    min: '1m',
    max: '24h',
  }),
] as const;

type Declared = (typeof SETTINGS)[number];
export type SettingName = Declared['name'];
export type IntegerSettingName = Extract<Declared, { kind: 'integer' }>['name'];
export type BooleanSettingName = Extract<Declared, { kind: 'boolean' }>['name'];
export type DurationSettingName = Extract<Declared, { kind: 'duration' }>['name'];
export type StringSettingName = Extract<Declared, { kind: 'string' }>['name'];

const NAME = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/;

/** Refuses a registry that could not be served: duplicate or malformed names, defaults out of bounds. */
export function checkRegistry(definitions: readonly SettingDefinition[]): Map<string, SettingDefinition> {
  const byName = new Map<string, SettingDefinition>();
  for (const definition of definitions) {
    if (!NAME.test(definition.name) || definition.name.length > 200) {
      throw new Error(`setting declaration: ${definition.name} is not a dotted lowercase name`);
    }
    if (byName.has(definition.name)) {
      throw new Error(`setting declaration: ${definition.name} is declared twice`);
    }
    const outOfBounds =
      ((definition.kind === 'integer' || definition.kind === 'duration') &&
        (!Number.isSafeInteger(definition.default) || definition.min > definition.max || definition.default < definition.min || definition.default > definition.max)) ||
      (definition.kind === 'string' && definition.default.length > definition.maxLength);
    if (outOfBounds) {
      throw new Error(`setting declaration: the default of ${definition.name} is outside its bounds`);
    }
    byName.set(definition.name, definition);
  }
  return byName;
}

const registry = checkRegistry(SETTINGS);

/** The settings served: Backplane's above and those the application's modules declare (ADR 0120). */
export const REGISTRY: ReadonlyMap<string, SettingDefinition> = registry;

/**
 * Called by the composition root with the settings its modules declare. One process runs one
 * application; a second composition (a test's) only adds names; a name declared differently fails.
 */
export function declareSettings(definitions: readonly SettingDefinition[]): void {
  const checked = checkRegistry(definitions);
  for (const [name, definition] of checked) {
    const known = registry.get(name);
    if (known && JSON.stringify(known) !== JSON.stringify(definition)) {
      throw new Error(`setting declaration: ${name} is declared twice, differently`);
    }
    registry.set(name, definition);
  }
}

export function findSetting(name: string): SettingDefinition | undefined {
  return REGISTRY.get(name);
}
