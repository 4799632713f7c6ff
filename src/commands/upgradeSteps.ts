import { type ChildProcess, spawn } from 'node:child_process';
import { appendFileSync } from 'node:fs';

/**
 * The steps of an application's upgrade in the order they run, each with the exit code upgrade
 * ends with when it fails there (ADR 0133): stable, so scripts can tell them apart.
 */
export const STEP_EXIT_CODES = { install: 10, load: 11, migrations: 12, tests: 13, doctor: 14, commit: 15 } as const;
export type UpgradeStep = keyof typeof STEP_EXIT_CODES;

/** What a step said about why it failed: its first line, found where each program puts it. */
const REASONS: Record<Exclude<UpgradeStep, 'doctor' | 'commit'>, RegExp[]> = {
  install: [/^npm (?:error|ERR!) (?!code |errno |syscall |path |A complete log|Log files)(.+)$/m],
  load: [/^backplane: (.+)$/m, /^\w*Error: (.+)$/m],
  migrations: [/^backplane: (.+)$/m, /^\w*Error: (.+)$/m],
  // tsc's first error, else the first failing test (node --test's spec or TAP reporter).
  tests: [/^(.+error TS\d+: .+)$/m, /^\s*✖ (?!failing tests)(.+?)(?: \([\d.]+m?s\))?$/m, /^\s*not ok \d+ - (.+)$/m, /^backplane: (.+)$/m, /^\w*Error: (.+)$/m],
};

/** The first line of why a step failed, out of what it printed; what it exited with when nothing reads as a reason. */
export function firstReason(step: Exclude<UpgradeStep, 'doctor' | 'commit'>, output: string, exit: string): string {
  // migrate up prints the migration's name, and PostgreSQL's words deepest in the causes.
  const migration = step === 'migrations' ? /migration (\d{14}_\w+) failed/.exec(output)?.[1] : undefined;
  const cause = [...output.matchAll(/\[cause\]: \w*error: (.+)$/gim)].at(-1)?.[1]?.trim();
  if (migration && cause) {
    return `migration ${migration} failed: ${cause}`;
  }
  for (const pattern of REASONS[step]) {
    const found = pattern.exec(output)?.[1]?.trim();
    if (found) {
      return found;
    }
  }
  return exit;
}

export interface StepResult {
  ok: boolean;
  stdout: string;
  /** Everything it printed, stdout and stderr, for firstReason. */
  output: string;
  /** How it ended, in words: "exited 1", "killed by SIGTERM". */
  exit: string;
}

const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/**
 * Runs npm commands in the application, one at a time, their output kept in a log file (the
 * upgrade prints one line; the log has the rest); stop() ends the one running, for an interrupt.
 */
export class StepRunner {
  private running: ChildProcess | undefined;
  private readonly dir: string;
  readonly log: string;

  constructor(dir: string, log: string) {
    this.dir = dir;
    this.log = log;
  }

  npm(args: string[], env: NodeJS.ProcessEnv): Promise<StepResult> {
    appendFileSync(this.log, `\n$ npm ${args.join(' ')}\n`);
    return new Promise((resolve) => {
      // A group of its own: an interrupt stops npm and what it started (a shell, tsc, node --test) together.
      const child = spawn(NPM, args, { cwd: this.dir, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
      this.running = child;
      let stdout = '';
      let output = '';
      const keep = (chunk: Buffer, isStdout: boolean) => {
        const text = chunk.toString();
        stdout += isStdout ? text : '';
        output += text;
        appendFileSync(this.log, text);
      };
      child.stdout.on('data', (chunk: Buffer) => keep(chunk, true));
      child.stderr.on('data', (chunk: Buffer) => keep(chunk, false));
      child.on('error', (error) => {
        this.running = undefined;
        resolve({ ok: false, stdout, output: `${output}\n${error.message}`, exit: `could not start npm (${error.message})` });
      });
      child.on('close', (code, signal) => {
        this.running = undefined;
        resolve({ ok: code === 0, stdout, output, exit: signal ? `killed by ${signal}` : `exited ${code}` });
      });
    });
  }

  stop(): void {
    if (this.running?.pid !== undefined) {
      try {
        process.kill(-this.running.pid, 'SIGTERM');
      } catch {
        // already gone
      }
    }
  }
}
