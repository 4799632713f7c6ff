import { durationSeconds } from './durations.ts';

// Each module declares its settings with these in its own folder; the literal names type the settings reader.
interface Common<N extends string> {
  name: N;
  group: string;
  description: string;
  /** A change must say why (reason_required). */
  reasonRequired?: boolean;
}

function seconds(text: string): number {
  const value = durationSeconds(text);
  if (value === undefined) {
    throw new Error(`setting declaration: ${text} is not a duration in whole seconds`);
  }
  return value;
}

export const integerSetting = <N extends string>(d: Common<N> & { default: number; min: number; max: number }) => ({ kind: 'integer' as const, ...d });
export const booleanSetting = <N extends string>(d: Common<N> & { default: boolean }) => ({ kind: 'boolean' as const, ...d });
export const stringSetting = <N extends string>(d: Common<N> & { default: string; maxLength: number }) => ({ kind: 'string' as const, ...d });
/** Bounds and default written as durations ("15m", "8760h"), held in whole seconds. */
export const durationSetting = <N extends string>(d: Common<N> & { default: string; min: string; max: string }) => ({
  ...d,
  kind: 'duration' as const,
  default: seconds(d.default),
  min: seconds(d.min),
  max: seconds(d.max),
});
