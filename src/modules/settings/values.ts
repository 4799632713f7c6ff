import { formatDurationSeconds, parseDurationNanos } from '../../platform/durations.ts';
import { SettingsError } from './errors.ts';
import type { SettingDefinition } from './registry.ts';

/** A setting's value in memory: durations in whole seconds. */
export type SettingValue = number | boolean | string;
/** A setting's value as it travels and is stored: durations as Go duration strings. */
export type SettingJson = number | boolean | string;

/** What a valid value looks like, for errors and documentation; never the value given. */
export function describeBounds(definition: SettingDefinition): string {
  switch (definition.kind) {
    case 'integer':
      return `a whole number from ${definition.min} to ${definition.max}`;
    case 'boolean':
      return 'true or false';
    case 'duration':
      return `a duration such as "15m" or "1h30m", in whole seconds, from ${formatDurationSeconds(definition.min)} to ${formatDurationSeconds(definition.max)}`;
    case 'string':
      return `a string of at most ${definition.maxLength} characters`;
  }
}

export function toJson(definition: SettingDefinition, value: SettingValue): SettingJson {
  return definition.kind === 'duration' ? formatDurationSeconds(value as number) : value;
}

function durationValue(raw: unknown): number | undefined {
  if (typeof raw !== 'string') {
    return undefined;
  }
  const nanos = parseDurationNanos(raw);
  if (nanos === undefined || nanos % 1_000_000_000n !== 0n) {
    return undefined;
  }
  return Number(nanos / 1_000_000_000n);
}

/** The value in memory when raw is valid for the definition, else undefined. */
export function readSettingValue(definition: SettingDefinition, raw: unknown): SettingValue | undefined {
  switch (definition.kind) {
    case 'integer':
      return typeof raw === 'number' && Number.isSafeInteger(raw) && raw >= definition.min && raw <= definition.max ? raw : undefined;
    case 'boolean':
      return typeof raw === 'boolean' ? raw : undefined;
    case 'duration': {
      const seconds = durationValue(raw);
      return seconds !== undefined && seconds >= definition.min && seconds <= definition.max ? seconds : undefined;
    }
    case 'string':
      return typeof raw === 'string' && [...raw].length <= definition.maxLength && !raw.includes('\u0000') ? raw : undefined;
  }
}

/** Like readSettingValue, but an invalid value is 422 invalid_setting_value naming the bound. */
export function parseSettingValue(definition: SettingDefinition, raw: unknown, location = 'body.value'): SettingValue {
  const value = readSettingValue(definition, raw);
  if (value === undefined) {
    const expected = describeBounds(definition);
    throw new SettingsError('invalid_setting_value', `${definition.name} takes ${expected}.`, {
      issues: [{ location, message: `must be ${expected}` }],
    });
  }
  return value;
}

/** Bounds as they appear in responses; duration bounds also in seconds. */
export function boundsView(definition: SettingDefinition): Record<string, number | string> {
  switch (definition.kind) {
    case 'integer':
      return { min: definition.min, max: definition.max };
    case 'boolean':
      return {};
    case 'duration':
      return {
        min: formatDurationSeconds(definition.min),
        max: formatDurationSeconds(definition.max),
        min_seconds: definition.min,
        max_seconds: definition.max,
      };
    case 'string':
      return { max_length: definition.maxLength };
  }
}
