import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { freePort } from '../../src/platform/db/embedded.ts';
import { sleep } from '../../src/platform/time.ts';

// This file stays off the instance's code (test/support/cluster.ts and instance.ts load it): the test process only runs programs.
export const root = join(import.meta.dirname, '..', '..');
/** The key the application's commands and instances seal secrets with (backplane/testing's TEST_ENCRYPTION_KEY). */
export const TEST_ENCRYPTION_KEY = '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff';

async function waitFor(probe: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe().catch(() => false))) {
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}`);
    }
    await sleep(200);
  }
}

export const GIT_ENV = { GIT_AUTHOR_NAME: 'Test', GIT_AUTHOR_EMAIL: 'test@example.com', GIT_COMMITTER_NAME: 'Test', GIT_COMMITTER_EMAIL: 'test@example.com' };

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Runs a program to its end in a folder, with the test's environment and npm kept off the network where its cache has the package. */
export function run(command: string, args: string[], options: { cwd: string; env?: Record<string, string | undefined> }): Promise<Ran> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: {
        ...process.env,
        npm_config_prefer_offline: 'true',
        npm_config_audit: 'false',
        npm_config_fund: 'false',
        npm_config_update_notifier: 'false',
        ...GIT_ENV,
        ...options.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('exit', (code) => resolve({ code, stdout, stderr, ms: Date.now() - started }));
  });
}

// Resolved from this repository: the application's folder has its own node_modules.
const TSX = import.meta.resolve('tsx');

/** This repository's CLI from source, run in another folder (`new`, before the application has one). */
export const backplane = (args: string[], cwd: string, env: Record<string, string | undefined> = {}) =>
  run(process.execPath, ['--import', TSX, join(root, 'src', 'cli.ts'), ...args], {
    cwd,
    env: { LOG_LEVEL: 'warn', APP_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY, ...env },
  });

/** The CLI of the backplane the application installed (the packed release), as `npx backplane …` runs it there. */
export const installedBackplane = (dir: string, args: string[], env: Record<string, string | undefined>) =>
  run(process.execPath, [join(dir, 'node_modules', 'backplane', 'dist', 'cli.js'), ...args], {
    cwd: dir,
    env: { LOG_LEVEL: 'warn', APP_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY, ...env },
  });

/** The application's own command line (`npm run backplane -- …`): Backplane's CLI composed with its modules. */
export const appCli = (dir: string, args: string[], env: Record<string, string | undefined>) =>
  run('npm', ['run', '--silent', 'backplane', '--', ...args], { cwd: dir, env: { LOG_LEVEL: 'warn', APP_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY, ...env } });

/** `npx backplane …` in a folder of the application: the backplane it installed, composed with its modules. */
export const npxBackplane = (dir: string, args: string[], env: Record<string, string | undefined>) =>
  run('npx', ['--no', 'backplane', ...args], { cwd: dir, env: { LOG_LEVEL: 'warn', APP_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY, ...env } });

export interface RunningApplication {
  url: string;
  /** What it printed so far (stdout and stderr). */
  output(): string;
  stop(): Promise<void>;
}

/**
 * `npm start` in the application (build, then serve) on free ports, resolved once /readyz answers
 * 200; `npm run backplane -- serve` (from the TypeScript sources, no build) when `from` is 'sources'.
 */
export async function startApplication(dir: string, env: Record<string, string>, from: 'build' | 'sources' = 'build'): Promise<RunningApplication> {
  const port = await freePort();
  let output = '';
  const child: ChildProcess = spawn('npm', from === 'build' ? ['start'] : ['run', 'backplane', '--', 'serve'], {
    cwd: dir,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      APP_INSTANCES: '1',
      APP_METRICS_PORT: String(await freePort()),
      LOG_LEVEL: 'info',
      APP_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  // npm start runs the build, then the primary: the whole process group stops with the test.
  const kill = (signal: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, signal);
    } catch {
      // already gone
    }
  };
  const killOnExit = () => kill('SIGKILL');
  process.once('exit', killOnExit);
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitFor(async () => (await fetch(`${url}/readyz`)).status === 200, 180_000, 'the application to be ready');
  } catch (error) {
    kill('SIGKILL');
    throw new Error(`${(error as Error).message}\n${output.slice(-3000)}`);
  }
  return {
    url,
    output: () => output,
    async stop() {
      kill('SIGTERM');
      await exited;
      process.removeListener('exit', killOnExit);
    },
  };
}
