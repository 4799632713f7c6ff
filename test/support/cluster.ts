import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { freePort } from '../../src/platform/db/embedded.ts';
import { sleep } from '../../src/platform/time.ts';
import { TEST_ENCRYPTION_KEY } from './instance.ts';

export const root = join(import.meta.dirname, '..', '..');

export interface TestCluster {
  url: string;
  metricsUrl: string;
  process: ChildProcess;
  output(): string;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

/** Runs the CLI from source, as `npx backplane …` would, and returns its exit code and output. */
export function runCli(
  args: string[],
  env: Record<string, string>,
  input?: string,
  entry = join(root, 'src', 'cli.ts'),
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', entry, ...args], {
      cwd: root,
      // The key test instances seal with: a command and an instance open each other's secrets.
      env: { ...process.env, LOG_LEVEL: 'warn', APP_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdin.end(input ?? '');
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

export async function waitFor<T>(probe: () => Promise<T | undefined>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) {
        return value;
      }
    } catch {
      // not yet
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}`);
    }
    await sleep(100);
  }
}

/**
 * `backplane serve` from source with N instances on free ports, resolved once /readyz is 200. A
 * port found free can be taken before the primary binds it (any process's outgoing connection may
 * get it as its local port): then the primary refuses it in one line, and new ports are tried.
 */
export async function startCluster(databaseUrl: string, instances: number, env: Record<string, string> = {}, cli?: string): Promise<TestCluster> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await startClusterOnFreePorts(databaseUrl, instances, env, cli);
    } catch (error) {
      if (attempt >= 3 || !/ is already in use/.test((error as Error).message)) {
        throw error;
      }
    }
  }
}

/** `cli`: another release's src/cli.ts to run instead of this one's (test/support/previousRelease.ts). */
async function startClusterOnFreePorts(databaseUrl: string, instances: number, env: Record<string, string>, cli?: string): Promise<TestCluster> {
  const port = await freePort();
  const metricsPort = await freePort();
  let output = '';
  const child = spawn(process.execPath, ['--import', 'tsx', cli ?? join(root, 'src', 'cli.ts'), 'serve'], {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      HOST: '127.0.0.1',
      APP_INSTANCES: String(instances),
      APP_METRICS_PORT: String(metricsPort),
      LOG_LEVEL: 'info',
      APP_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  // A test process that ends abruptly (a timeout) must not leave a cluster running on the machine.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  void exited.then(() => process.removeListener('exit', killOnExit));
  const url = `http://127.0.0.1:${port}`;
  // A primary that refuses to start (a port taken meanwhile) says so at once: no need to wait the whole time.
  const refused = exited.then((code) => Promise.reject(new Error(`backplane serve exited with code ${code} before it was ready`)));
  refused.catch(() => undefined);
  await Promise.race([waitFor(async () => (output.includes('"msg":"ready:') ? true : undefined), 60_000, 'the cluster to be ready'), refused]).catch(
    (error: Error) => {
      child.kill('SIGKILL');
      throw new Error(`${error.message}\n${output.slice(-3000)}`);
    },
  );
  return {
    url,
    metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
    process: child,
    output: () => output,
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
      }
      return exited;
    },
  };
}
