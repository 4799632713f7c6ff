import { parseArgs as parseNodeArgs } from 'node:util';
import { durationSeconds } from '../platform/durations.ts';

/** Parsed command line: positional words (the subcommand first) and --flags (repeatable ones as lists). */
export interface Flags {
  positional: string[];
  values: Map<string, string[]>;
}

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export interface FlagSpec {
  type: 'string' | 'boolean';
  description: string;
  /** What the value stands for in usage lines: E, N, 15m. */
  value?: string;
  multiple?: boolean;
  short?: string;
}

/** One command or subcommand as data: parsing, help and the command list all come from it. */
export interface CommandSpec {
  name: string;
  summary: string;
  /** Positional words after the (sub)command name, in usage form: ['NAME', 'VALUE']. */
  args?: string[];
  /** The last positional may repeat or be omitted, e.g. optional words. */
  optionalArgs?: number;
  flags?: Record<string, FlagSpec>;
  subcommands?: CommandSpec[];
}

export const JSON_FLAG: Record<string, FlagSpec> = { json: { type: 'boolean', description: 'print JSON for programs instead of a table' } };
export const REASON_FLAG: Record<string, FlagSpec> = { reason: { type: 'string', value: 'R', description: 'why: kept in history and the audit log' } };

const HELP_FLAG: Record<string, FlagSpec> = { help: { type: 'boolean', short: 'h', description: 'show this help and do nothing else' } };

function flagUsage(name: string, spec: FlagSpec): string {
  return spec.type === 'boolean' ? `--${name}` : `--${name} ${spec.value ?? 'VALUE'}${spec.multiple ? '...' : ''}`;
}

export function usageLine(path: string[], spec: CommandSpec): string {
  const words = ['backplane', ...path];
  if (spec.subcommands?.length) {
    words.push(spec.subcommands.map((sub) => sub.name).join('|'), '...');
  }
  words.push(...(spec.args ?? []));
  for (const [name, flag] of Object.entries(spec.flags ?? {})) {
    words.push(`[${flagUsage(name, flag)}]`);
  }
  return words.join(' ');
}

/** Usage of a command: its line, its subcommands and its flags, aligned. */
export function helpText(path: string[], spec: CommandSpec): string {
  const lines = [`usage: ${usageLine(path, spec)}`, '', spec.summary];
  if (spec.subcommands?.length) {
    lines.push('', 'subcommands:');
    const width = Math.max(...spec.subcommands.map((sub) => sub.name.length));
    for (const sub of spec.subcommands) {
      lines.push(`  ${sub.name.padEnd(width)}  ${sub.summary}`);
    }
    lines.push('', `run "backplane ${path.join(' ')} SUBCOMMAND --help" for its flags`);
  }
  const flags = Object.entries({ ...spec.flags, ...HELP_FLAG });
  const shown = flags.map(([name, flag]) => [`${flag.short ? `-${flag.short}, ` : ''}${flagUsage(name, flag)}`, flag.description] as const);
  const width = Math.max(...shown.map(([left]) => left.length));
  lines.push('', 'flags:', ...shown.map(([left, description]) => `  ${left.padEnd(width)}  ${description}`));
  return lines.join('\n');
}

/** Finds the deepest (sub)command the words name; the rest of argv is its own. */
export function resolveCommand(root: CommandSpec, argv: string[]): { path: string[]; spec: CommandSpec; rest: string[] } {
  const path: string[] = [];
  let spec = root;
  let rest = argv;
  while (spec.subcommands?.length && rest[0] !== undefined && !rest[0].startsWith('-')) {
    const next = spec.subcommands.find((sub) => sub.name === rest[0]);
    if (!next) {
      const where = path.length ? `subcommand "${path.join(' ')} ${rest[0]}"` : `command "${rest[0]}"`;
      throw new UsageError(`unknown ${where}; see: backplane ${[...path, '--help'].join(' ')}`);
    }
    path.push(next.name);
    spec = next;
    rest = rest.slice(1);
  }
  return { path, spec, rest };
}

export const wantsHelp = (argv: string[]): boolean => {
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).some((word) => word === '--help' || word === '-h');
};

/** Strict parsing of a command's own words: an unknown flag, a missing value or a stray word is a UsageError. */
export function parseCommandArgs(path: string[], spec: CommandSpec, argv: string[]): Flags {
  if (spec.subcommands?.length) {
    throw new UsageError(`"backplane ${path.join(' ')}" needs a subcommand: ${spec.subcommands.map((sub) => sub.name).join(', ')}`);
  }
  const options = Object.fromEntries(
    Object.entries({ ...spec.flags, ...HELP_FLAG }).map(([name, flag]) => [
      name,
      { type: flag.type, multiple: flag.multiple ?? false, ...(flag.short ? { short: flag.short } : {}) },
    ]),
  );
  let parsed;
  try {
    parsed = parseNodeArgs({ args: argv, options, strict: true, allowPositionals: true });
  } catch (error) {
    // Node's message, first sentence only: "Unknown option '--x'", "Option '--email <value>' argument missing".
    throw new UsageError(`${(error as Error).message.split(/\.\s/)[0]!.replace(/\.$/, '')} (backplane ${path.join(' ')})`);
  }
  const expected = spec.args ?? [];
  const least = expected.length - (spec.optionalArgs ?? 0);
  if (parsed.positionals.length < least) {
    throw new UsageError(`missing ${expected.slice(parsed.positionals.length).join(' ')}; usage: ${usageLine(path, spec)}`);
  }
  if (parsed.positionals.length > expected.length) {
    throw new UsageError(`unexpected argument "${parsed.positionals[expected.length]}"; usage: ${usageLine(path, spec)}`);
  }
  const values = new Map<string, string[]>();
  for (const [name, value] of Object.entries(parsed.values)) {
    const list = (Array.isArray(value) ? value : [value]).map((item) => (typeof item === 'boolean' ? String(item) : item));
    values.set(
      name,
      list.filter((item): item is string => item !== undefined),
    );
  }
  return { positional: [...path.slice(1), ...parsed.positionals], values };
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

/** Go-style durations, the same parser the settings API uses: 15m, 1h30m, 1.5h, 90s. */
export function parseDurationSeconds(text: string): number | undefined {
  return durationSeconds(text);
}
