export type SettingKind = 'integer' | 'boolean' | 'duration' | 'string';

interface Common<N extends string> {
  name: N;
  group: string;
  description: string;
  /** A change without a reason is refused (reason_required). */
  reasonRequired?: boolean;
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

/** The setting names of some declarations, by kind: Backplane's wiring reads its own modules' settings by these. */
type NameOf<D, K extends SettingKind> = D extends { kind: K; name: infer N extends string } ? N : never;
export type IntegerSettingName<D = SettingDefinition> = NameOf<D, 'integer'>;
export type BooleanSettingName<D = SettingDefinition> = NameOf<D, 'boolean'>;
export type DurationSettingName<D = SettingDefinition> = NameOf<D, 'duration'>;
export type StringSettingName<D = SettingDefinition> = NameOf<D, 'string'>;

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
        (!Number.isSafeInteger(definition.default) ||
          definition.min > definition.max ||
          definition.default < definition.min ||
          definition.default > definition.max)) ||
      (definition.kind === 'string' && definition.default.length > definition.maxLength);
    if (outOfBounds) {
      throw new Error(`setting declaration: the default of ${definition.name} is outside its bounds`);
    }
    byName.set(definition.name, definition);
  }
  return byName;
}

const registry = new Map<string, SettingDefinition>();

/** The settings served: those every module of the composed application declares, Backplane's and its own (ADR 0120). */
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
