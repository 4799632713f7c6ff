import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sleep } from '../time.ts';

/** A running PostgreSQL server as its data directory's postmaster.pid names it. */
export interface Postmaster {
  pid: number;
  port: number;
}

/** How long a fast shutdown may take (its checkpoint) before the server is told to quit at once. */
const FAST_SHUTDOWN_MS = 60_000;
const IMMEDIATE_SHUTDOWN_MS = 10_000;

/**
 * True when the process exists and has not exited. A zombie (exited, not yet reaped by its
 * parent) answers kill(pid, 0) but is dead: on Linux its /proc state says so.
 */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') {
      return false;
    }
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^[ZX]/.test(stat.slice(stat.lastIndexOf(')') + 2));
  } catch {
    // No /proc (macOS) or not ours to read: kill(pid, 0) has answered.
    return true;
  }
}

/** The postmaster serving clusterDir, if its postmaster.pid names a process still running. */
export function livePostmaster(clusterDir: string): Postmaster | undefined {
  const pidFile = join(clusterDir, 'postmaster.pid');
  let lines: string[];
  try {
    lines = readFileSync(pidFile, 'utf8').split('\n');
  } catch {
    return undefined;
  }
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  // A server writes the file in steps while it starts: a half-written one names no port yet.
  if (!Number.isInteger(pid) || pid <= 0 || !Number.isInteger(port) || port <= 0) {
    return undefined;
  }
  return isRunning(pid) ? { pid, port } : undefined;
}

/**
 * Stops a postmaster whether or not this process started it: a fast shutdown (SIGINT: sessions
 * end, a checkpoint, a clean exit), then an immediate one (SIGQUIT: crash recovery at the next
 * start) if the first takes longer than a minute. Resolves once the process has exited.
 */
export async function stopPostmaster(pid: number): Promise<void> {
  for (const [signal, waitMs] of [
    ['SIGINT', FAST_SHUTDOWN_MS],
    ['SIGQUIT', IMMEDIATE_SHUTDOWN_MS],
  ] as const) {
    try {
      process.kill(pid, signal);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ESRCH') {
        return;
      }
      throw new Error(`cannot stop the embedded PostgreSQL (pid ${pid}): ${(error as Error).message}`);
    }
    const deadline = Date.now() + waitMs;
    while (isRunning(pid)) {
      if (Date.now() > deadline) {
        break;
      }
      await sleep(50);
    }
    if (!isRunning(pid)) {
      return;
    }
  }
  throw new Error(`the embedded PostgreSQL (pid ${pid}) did not stop within ${(FAST_SHUTDOWN_MS + IMMEDIATE_SHUTDOWN_MS) / 1000} s`);
}

/** Asks a postmaster for a fast shutdown without waiting: for an exiting process that cannot wait. */
export function signalFastShutdown(pid: number): void {
  try {
    process.kill(pid, 'SIGINT');
  } catch {
    // Already gone.
  }
}
