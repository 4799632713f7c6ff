import type { SettingsCache } from './cache.ts';
import type { BooleanSettingName, DurationSettingName, IntegerSettingName, StringSettingName } from './registry.ts';

/**
 * Typed reads from memory for the modules that obey settings (limits, retention, maintenance).
 * Consumers declare the narrower port they need; this object fills it.
 */
export interface SettingsReader {
  integer(name: IntegerSettingName): number;
  boolean(name: BooleanSettingName): boolean;
  /** Whole seconds. */
  duration(name: DurationSettingName): number;
  string(name: StringSettingName): string;
}

export function createSettingsReader(cache: SettingsCache): SettingsReader {
  const value = (name: string) => {
    const entry = cache.get(name);
    if (!entry) {
      throw new Error(`setting ${name} is not declared`);
    }
    return entry.value;
  };
  return {
    integer: (name) => value(name) as number,
    boolean: (name) => value(name) as boolean,
    duration: (name) => value(name) as number,
    string: (name) => value(name) as string,
  };
}
