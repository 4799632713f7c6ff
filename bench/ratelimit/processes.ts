// Processes the benchmark starts and always stops: a throw-away PostgreSQL and HTTP servers.
import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort, openEmbeddedDatabase } from '../../src/platform/db/embedded.ts';
import { migrateUp } from '../../src/platform/db/migrations.ts';
import { createPool } from '../../src/platform/db/pool.ts';
import { stopChild, waitForHttp } from '../support/harness.ts';
import { treeCpu } from './cpu.ts';

export const root = join(import.meta.dirname, '..', '..');

export interface Stoppable {
  /** Root of the process tree, for CPU accounting. */
  pid: number;
  stop(): Promise<void>;
}

/**
 * A throw-away PostgreSQL: durable (fsync, synchronous commit) as `backplane serve` runs it, or
 * with both off as the test suite runs it. `packagePrefix`: another major's binaries (benchPostgres).
 */
export async function startDatabase(durable: boolean, packagePrefix?: string): Promise<Stoppable & { url: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'backplane-bench-'));
  chmodSync(dataDir, 0o755);
  const server = await openEmbeddedDatabase({ dataDir, fast: !durable, packagePrefix });
  const pool = createPool({ connectionString: server.url, max: 1, applicationName: 'bench' });
  await migrateUp(pool);
  await pool.end();
  const postmaster = Number(readFileSync(join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);
  return {
    url: server.url,
    pid: postmaster,
    async stop() {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Pays what the previous run left behind before the next one is measured: its dead rows and new
 * buckets vacuumed and analysed (autovacuum would do it at some moment of a later run), its dirty
 * pages written out.
 */
export async function settleDatabase(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('vacuum (analyze)');
    await client.query('checkpoint');
  } finally {
    await client.end();
  }
}

export interface Server extends Stoppable {
  url: string;
  metricsUrl?: string;
}

/** `backplane serve` from source with N instances on a free loopback port. */
export async function startService(env: Record<string, string>): Promise<Server> {
  const port = await freePort();
  const metricsPort = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'src', 'cli.ts'), 'serve'], {
    cwd: root,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', APP_METRICS_PORT: String(metricsPort), ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  await startedOrStopped(child, () => waitForHttp(`${url}/readyz`, child, 90_000));
  return { url, pid: child.pid!, metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`, stop: () => stopChild(child) };
}

/** A baseline server script (reads PORT) under tsx. */
export async function startScript(script: string, env: Record<string, string>): Promise<Server> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', script], {
    cwd: root,
    env: { ...process.env, PORT: String(port), ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  await startedOrStopped(child, () => waitForHttp(`${url}/`, child, 90_000));
  return { url, pid: child.pid!, stop: () => stopChild(child) };
}

/** A server that does not come up is stopped before the error goes on: a failed run leaves no cluster restarting its instances. */
async function startedOrStopped(child: ChildProcess, waitForIt: () => Promise<void>): Promise<void> {
  try {
    await waitForIt();
  } catch (error) {
    await stopChild(child);
    throw error;
  }
}

/**
 * Freezes a process tree (PostgreSQL's postmaster and its backends) with SIGSTOP for `ms`, then
 * SIGCONT: the database neither answers nor fails, as on a host that stalls. The postmaster stops
 * first, so no backend it forks is missed.
 */
export async function pauseTree(rootPid: number, ms: number): Promise<void> {
  process.kill(rootPid, 'SIGSTOP');
  const pids = [...(treeCpu([rootPid]).get(rootPid)?.keys() ?? [])];
  try {
    for (const pid of pids.filter((pid) => pid !== rootPid)) {
      signal(pid, 'SIGSTOP');
    }
    await new Promise((resolve) => setTimeout(resolve, ms));
  } finally {
    for (const pid of [...pids, rootPid]) {
      signal(pid, 'SIGCONT');
    }
  }
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // it ended meanwhile
  }
}

/** One process spinning on each core while `work` runs, as on a busy CI machine; only those are stopped. */
export async function withBusyCores<T>(work: () => Promise<T>): Promise<T> {
  const spinners = Array.from({ length: availableParallelism() }, () => spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' }));
  try {
    return await work();
  } finally {
    for (const spinner of spinners) {
      spinner.kill('SIGKILL');
    }
  }
}
