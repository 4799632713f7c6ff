import { type Application, compose, currentApplication, useApplication } from '../app/application.ts';
import { ConfigError } from '../app/config.ts';
import { exitingOnSignal } from '../app/databaseSignals.ts';
import { AppError } from '../platform/errors.ts';
import { UsageError, helpText, parseCommandArgs, resolveCommand, wantsHelp } from './args.ts';
import { COMMANDS, type TopCommand } from './registry.ts';
import { SchemaNotCurrent } from './schemaRequired.ts';

function commandList(commands: readonly TopCommand[]): string {
  const width = Math.max(...commands.map((command) => command.name.length));
  return [
    'usage: backplane <command> [subcommand] [flags]',
    '',
    ...commands.map((command) => `  ${command.name.padEnd(width)}  ${command.summary}`),
    '',
    'Run "backplane <command> --help" for its subcommands and flags, "backplane --version" for the version.',
    'Configuration comes from the environment; see README.md.',
  ].join('\n');
}

/** Backplane's commands, then those the application's modules declare. */
function commandsOf(application: Application | undefined): TopCommand[] {
  const declared = application ? compose(application).commands : [];
  return [...COMMANDS, ...declared.map(({ run, ...spec }) => ({ ...spec, load: async () => run }))];
}

async function main(argv: string[], application: Application | undefined): Promise<number> {
  const commands = commandsOf(application);
  const [first, ...others] = argv;
  if (first === undefined || (first === 'help' && others.length === 0) || first === '--help' || first === '-h') {
    console.log(commandList(commands));
    return 0;
  }
  if (first === '--version' || first === '-v') {
    const { loadBuildInfo } = await import('../app/buildInfo.ts');
    console.log(loadBuildInfo().version);
    return 0;
  }
  // "help accounts create" is "accounts create --help".
  const words = first === 'help' ? [...others, '--help'] : argv;
  const { path, spec, rest } = resolveCommand({ name: 'backplane', summary: 'Backplane operator commands', subcommands: commands }, words);
  if (wantsHelp(rest)) {
    console.log(helpText(path, spec));
    return 0;
  }
  const flags = parseCommandArgs(path, spec, rest);
  // Every command acts on the composed application: its permissions, settings and jobs.
  await currentApplication();
  const run = await commands.find((command) => command.name === path[0])!.load();
  return (await run(flags)) ?? 0;
}

/**
 * Runs the `backplane` command line for an application: `serve` starts its cluster (each forked
 * instance runs the same entry file, so it composes the same application), every other command
 * uses its modules. Exits the process when the command ends; `serve` keeps running.
 */
export function runCli(application: Application | undefined, argv: readonly string[] = process.argv.slice(2)): void {
  if (application) {
    useApplication(application);
  }
  main([...argv], application).then(
    (code) => {
      if (exitingOnSignal()) {
        return;
      }
      // serve keeps running; other commands end here.
      if (argv[0] !== 'serve' || code !== 0 || argv.slice(1).some((word) => word === '--help' || word === '-h')) {
        process.exit(code);
      }
    },
    (error: unknown) => {
      // A signal is stopping the database the command started; its handler exits with 128 + the signal.
      if (exitingOnSignal()) {
        return;
      }
      if (error instanceof UsageError || error instanceof ConfigError || error instanceof SchemaNotCurrent) {
        console.error(`backplane: ${error.message}`);
        process.exit(2);
      }
      if (error instanceof AppError) {
        console.error(`backplane: ${error.code}: ${error.message}`);
        process.exit(1);
      }
      // By name: importing the migrator here would load umzug for every command.
      if (error instanceof Error && error.name === 'MigrationFailed') {
        console.error(`backplane: ${error.message}`);
        process.exit(1);
      }
      console.error('backplane: failed:', error);
      process.exit(1);
    },
  );
}
