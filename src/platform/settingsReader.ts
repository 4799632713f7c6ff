// The settings reader as an application's module sees it: typed by the module's own declarations,
// so a misspelt name, or a name of another kind, does not compile.

/** The kinds of setting, each held in memory as one JavaScript type (a duration in whole seconds). */
export type SettingKind = 'integer' | 'boolean' | 'duration' | 'string';

/** The names of the settings of one kind among some declarations (`(typeof notesSettings)[number]`). */
export type SettingName<D, K extends SettingKind> = D extends { kind: K; name: infer N extends string } ? N : never;

/** Any declaration's kind and name: the reader of every setting. */
export type AnySetting = { [K in SettingKind]: { kind: K; name: string } }[SettingKind];

/**
 * Reads settings from the instance's memory (an operator's change reaches every instance within a
 * second). `SettingsReader<(typeof notesSettings)[number]>` accepts the names those declarations
 * give, each by its kind.
 */
export interface SettingsReader<D = AnySetting> {
  /** An integer setting's value. */
  integer(name: SettingName<D, 'integer'>): number;
  /** A boolean setting's value. */
  boolean(name: SettingName<D, 'boolean'>): boolean;
  /** A duration setting's value, in whole seconds. */
  duration(name: SettingName<D, 'duration'>): number;
  /** A string setting's value. */
  string(name: SettingName<D, 'string'>): string;
}

/** What the settings module offers the modules that name `settings` in their needs (`context.settings` is its reader). */
export interface SettingsApi<D = AnySetting> {
  /** The reader, typed by the declarations `D`. */
  reader: SettingsReader<D>;
}
