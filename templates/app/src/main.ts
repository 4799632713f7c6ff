import { CompositionError, runCli } from 'backplane';

/** What stopped the application loading, in one line: the message, and where in its sources it was thrown. */
function loadFailure(error: unknown): string {
  const what = (error instanceof Error ? error.message : String(error)).split('\n').map((line) => line.trim()).filter(Boolean).join(' ');
  const frames = error instanceof Error ? (error.stack ?? '').split('\n').slice(1) : [];
  const where = frames.map((frame) => /(?:\(|^at )((?:file:\/\/)?\/[^()]+:\d+:\d+)\)?$/.exec(frame.trim())?.[1]).find((file) => file !== undefined && !file.includes('/node_modules/'));
  return where === undefined ? what : `${what} (${where})`;
}

// A module that does not load (a syntax error, a missing file, a refused declaration) stops every command in one line, not a stack trace.
const { application } = await import('./application.ts').catch((error: unknown) => {
  process.stderr.write(`backplane: the application did not load: ${loadFailure(error)}\n`);
  return process.exit(error instanceof CompositionError ? 2 : 1);
});

// `serve` starts the cluster (each instance runs this file again); every other word is one of Backplane's commands or a module's.
runCli(application);
