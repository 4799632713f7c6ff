import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { constants } from 'node:os';
import { dirname, extname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { type ApplicationFolder, applicationTsx, findApplication } from './applicationFolder.ts';

/** About the folder and the package rather than the composed application: they run as invoked. */
const PACKAGE_COMMANDS = new Set(['new', 'upgrade']);
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
const here = dirname(fileURLToPath(import.meta.url));
// The loader beside this file: .ts from the sources, .js once built.
const LOADER = join(here, `applicationLoader${extname(fileURLToPath(import.meta.url))}`);

function refuse(line: string, code: number): never {
  console.error(`backplane: ${line}`);
  process.exit(code);
}

/** An error as one line: tsx's transform errors put the file and the fault on the lines after the first. */
function inOneLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return (
    text
      .split('\n')
      .map((line) => line.trim())
      .filter(Boolean)
      .join(' ')
      .slice(0, 400) || 'unknown error'
  );
}

/**
 * Runs the application's entry in this process, as `node ENTRY …ARGV` would: the entry reads its
 * command line from process.argv, and serve forks its instances from process.argv[1].
 */
export async function loadApplication(root: string, entry: string, argv: string[]): Promise<void> {
  process.argv.splice(1, process.argv.length - 1, entry, ...argv);
  try {
    await import(pathToFileURL(entry).href);
  } catch (error) {
    // A composition refusal is the application's configuration, as the entry itself would exit (2); anything else is its code failing (1).
    const { CompositionError } = await import('../app/compositionChecks.ts');
    refuse(`the application in ${root} did not load (${relative(root, entry)}): ${inOneLine(error)}`, error instanceof CompositionError ? 2 : 1);
  }
}

/** The entry's TypeScript through the application's own tsx, in a child process, as `npm run backplane` runs it. */
function runThroughTsx(app: ApplicationFolder, entry: string, tsx: string, argv: string[]): void {
  const child = spawn(process.execPath, ['--import', pathToFileURL(tsx).href, LOADER, app.root, entry, ...argv], { stdio: 'inherit' });
  // Relayed as npm run relays them; a signal from the terminal reaches both, and the commands treat a repeat as the same request.
  const relays = SIGNALS.map((signal) => [signal, () => child.kill(signal)] as const);
  relays.forEach(([signal, relay]) => process.on(signal, relay));
  child.on('error', (error) => refuse(`could not run the application's command line in ${app.root}: ${error.message}`, 1));
  child.on('exit', (code, signal) => {
    relays.forEach(([name, relay]) => process.removeListener(name, relay));
    process.exit(code ?? 128 + (signal ? constants.signals[signal] : 0));
  });
}

/**
 * Inside an application (ADR 0122: the nearest package.json depends on backplane and declares
 * backplane.entry), `npx backplane …` is the application's command line: Backplane composed with its
 * modules, as `npm run backplane -- …` is. Returns false where Backplane runs alone: outside an
 * application, in one that declares no entry (made before 0.6), and for new and upgrade.
 */
export function runApplicationCli(cwd: string, argv: string[]): boolean {
  if (PACKAGE_COMMANDS.has(argv[0] ?? '')) {
    return false;
  }
  const app = findApplication(cwd);
  if (!app || (!app.entry && !app.builtEntry)) {
    return false;
  }
  // As npm run (which runs in the root), the application's embedded database whichever folder of it this runs in.
  process.env.APP_DATA_DIR ||= join(app.root, '.data');
  const { entry, builtEntry } = app;
  if (entry && existsSync(entry)) {
    if (!/\.[cm]?ts$/.test(entry)) {
      void loadApplication(app.root, entry, argv);
      return true;
    }
    const tsx = applicationTsx(app.root);
    if (tsx) {
      runThroughTsx(app, entry, tsx, argv);
      return true;
    }
  }
  if (builtEntry && existsSync(builtEntry)) {
    void loadApplication(app.root, builtEntry, argv);
    return true;
  }
  const missing = [
    ...(entry ? [existsSync(entry) ? `${relative(app.root, entry)} needs tsx (npm install)` : `${relative(app.root, entry)} is missing`] : []),
    ...(builtEntry ? [`${relative(app.root, builtEntry)} is not built (npm run build)`] : []),
  ];
  refuse(`the application in ${app.root} cannot run its command line: ${missing.join(' and ')}`, 2);
}
