#!/usr/bin/env node
import { ConfigError } from './app/config.ts';
import { AppError } from './platform/errors.ts';
import { UsageError, helpText, parseCommandArgs, resolveCommand, wantsHelp } from './commands/args.ts';
import { COMMANDS, ROOT } from './commands/registry.ts';

function commandList(): string {
  const width = Math.max(...COMMANDS.map((command) => command.name.length));
  return [
    'usage: backplane <command> [subcommand] [flags]',
    '',
    ...COMMANDS.map((command) => `  ${command.name.padEnd(width)}  ${command.summary}`),
    '',
    'Run "backplane <command> --help" for its subcommands and flags, "backplane --version" for the version.',
    'Configuration comes from the environment; see README.md.',
  ].join('\n');
}

async function main(argv: string[]): Promise<number> {
  const [first, ...others] = argv;
  if (first === undefined || first === 'help' && others.length === 0 || first === '--help' || first === '-h') {
    console.log(commandList());
    return 0;
  }
  if (first === '--version' || first === '-v') {
    const { loadBuildInfo } = await import('./app/buildInfo.ts');
    console.log(loadBuildInfo().version);
    return 0;
  }
  // "help accounts create" is "accounts create --help".
  const words = first === 'help' ? [...others, '--help'] : argv;
  const { path, spec, rest } = resolveCommand(ROOT, words);
  if (wantsHelp(rest)) {
    console.log(helpText(path, spec));
    return 0;
  }
  const flags = parseCommandArgs(path, spec, rest);
  const run = await COMMANDS.find((command) => command.name === path[0])!.load();
  return (await run(flags)) ?? 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    // serve keeps running; other commands end here.
    if (process.argv[2] !== 'serve' || code !== 0 || process.argv.slice(3).some((word) => word === '--help' || word === '-h')) {
      process.exit(code);
    }
  },
  (error: unknown) => {
    if (error instanceof UsageError || error instanceof ConfigError) {
      console.error(`backplane: ${error.message}`);
      process.exit(2);
    }
    if (error instanceof AppError) {
      console.error(`backplane: ${error.code}: ${error.message}`);
      process.exit(1);
    }
    console.error('backplane: failed:', error);
    process.exit(1);
  },
);
