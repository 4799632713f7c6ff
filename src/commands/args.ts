/** Parsed command line: positional words and --flags (repeatable, or boolean when bare). */
export interface Flags {
  positional: string[];
  values: Map<string, string[]>;
}

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

const BOOLEAN_FLAGS = new Set(['json', 'password-stdin', 'dry-run', 'help']);

export function parseArgs(argv: string[]): Flags {
  const flags: Flags = { positional: [], values: new Map() };
  for (let i = 0; i < argv.length; i += 1) {
    const word = argv[i]!;
    if (!word.startsWith('--')) {
      flags.positional.push(word);
      continue;
    }
    const [name, inline] = word.slice(2).split(/=(.*)/s, 2) as [string, string | undefined];
    let value = inline;
    if (value === undefined) {
      if (BOOLEAN_FLAGS.has(name)) {
        value = 'true';
      } else {
        value = argv[i + 1];
        i += 1;
        if (value === undefined) {
          throw new UsageError(`--${name} needs a value`);
        }
      }
    }
    flags.values.set(name, [...(flags.values.get(name) ?? []), value]);
  }
  return flags;
}

export const flag = (flags: Flags, name: string): string | undefined => flags.values.get(name)?.at(-1);
export const flagList = (flags: Flags, name: string): string[] => flags.values.get(name) ?? [];
export const hasFlag = (flags: Flags, name: string): boolean => flags.values.has(name);

export function requiredFlag(flags: Flags, name: string): string {
  const value = flag(flags, name);
  if (!value) {
    throw new UsageError(`--${name} is required`);
  }
  return value;
}

export function integerFlag(flags: Flags, name: string): number | undefined {
  const value = flag(flags, name);
  if (value === undefined) {
    return undefined;
  }
  if (!/^\d+$/.test(value)) {
    throw new UsageError(`--${name} must be a whole number`);
  }
  return Number(value);
}

const DURATION = /^(\d+h)?(\d+m)?(\d+s)?$/;

/** Go-style durations as operators write them: 15m, 1h30m, 90s. */
export function parseDurationSeconds(text: string): number | undefined {
  const match = DURATION.exec(text);
  if (!text || !match) {
    return undefined;
  }
  const [, h = '0h', m = '0m', s = '0s'] = match;
  return parseInt(h, 10) * 3600 + parseInt(m, 10) * 60 + parseInt(s, 10);
}
