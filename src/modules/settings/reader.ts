import type { SettingsCache } from './cache.ts';
import type { BooleanSettingName, DurationSettingName, IntegerSettingName, SettingDefinition, StringSettingName } from './registry.ts';

/**
 * Typed reads from memory for the modules that obey settings (limits, retention, maintenance).
 * Consumers declare the narrower port they need; this object fills it. Read as a reader of some
 * modules' declarations (`SettingsReader<typeof authSettings[number]>`), names are checked by kind.
 */
export interface SettingsReader<D = SettingDefinition> {
  integer(name: IntegerSettingName<D>): number;
  boolean(name: BooleanSettingName<D>): boolean;
  /** Whole seconds. */
  duration(name: DurationSettingName<D>): number;
  string(name: StringSettingName<D>): string;
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
