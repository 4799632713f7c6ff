import { chmodSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type EmbeddedDatabase, openEmbeddedDatabase } from '../../src/platform/db/embedded.ts';
import { migrateUp } from '../../src/platform/db/migrations.ts';
import { type InstrumentedPool, createPool } from '../../src/platform/db/pool.ts';
import { testPostgresPrefix } from './database.ts';

/**
 * A migrated PostgreSQL of a test file's own, for tests that stop the database on purpose (the
 * shared test server must keep running for every other file). Restarts on the same port.
 */
export interface StoppableDatabase {
  url: string;
  stop(): Promise<void>;
  /** Starts it again after stop(); while it runs, does nothing (a second open would hold it without owning it, so remove() could not stop it). */
  restart(): Promise<void>;
  /**
   * SIGSTOPs the postmaster and every backend: connections stay open and nothing answers, as with
   * a hung host. Linux only (reads /proc).
   */
  freeze(): void;
  /** SIGCONTs what freeze() stopped (and any process it forked since). */
  thaw(): void;
  /** Stops it if running and deletes its files. */
  remove(): Promise<void>;
}

/** The postmaster of the cluster in dataDir and all its descendants, postmaster first. */
function serverProcesses(dataDir: string): number[] {
  const postmaster = Number(readFileSync(join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) {
      continue;
    }
    try {
      // The command may hold spaces and parentheses: the fields after its last ')' are fixed.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // The process ended while we looked.
    }
  }
  const tree = [postmaster];
  for (let index = 0; index < tree.length; index += 1) {
    for (const [pid, parent] of parents) {
      if (parent === tree[index]) {
        tree.push(pid);
      }
    }
  }
  return tree;
}

/** Signals the server's processes; one that ended since they were listed, or a stopped server, is skipped. */
function signalServer(dataDir: string, signal: NodeJS.Signals): void {
  if (!existsSync(join(dataDir, 'postgres', 'postmaster.pid'))) {
    return;
  }
  const send = (pid: number) => {
    try {
      process.kill(pid, signal);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ESRCH') {
        throw error;
      }
    }
  };
  const [postmaster, ...descendants] = serverProcesses(dataDir);
  if (signal !== 'SIGSTOP') {
    [postmaster!, ...descendants].forEach(send);
    return;
  }
  // The postmaster first, then its descendants listed again: a backend it forked between the first
  // listing and its stop would otherwise escape the freeze and answer every query (a flaky test).
  send(postmaster!);
  serverProcesses(dataDir).slice(1).forEach(send);
}

export async function startStoppableDatabase(prepare: (pool: InstrumentedPool) => Promise<void> = async () => undefined): Promise<StoppableDatabase> {
  const dataDir = mkdtempSync(join(tmpdir(), 'backplane-stoppable-'));
  // As root the server runs as the postgres user, which must be able to enter this folder.
  chmodSync(dataDir, 0o755);
  let server: EmbeddedDatabase = await openEmbeddedDatabase({ dataDir, fast: true, packagePrefix: testPostgresPrefix() });
  const port = Number(new URL(server.url).port);
  const pool = createPool({ connectionString: server.url, max: 2, applicationName: 'test' });
  try {
    await migrateUp(pool);
    await prepare(pool);
  } finally {
    await pool.end();
  }
  let running = true;
  return {
    url: server.url,
    async stop() {
      await server.stop();
      running = false;
    },
    async restart() {
      if (running) {
        return;
      }
      server = await openEmbeddedDatabase({ dataDir, fast: true, port, packagePrefix: testPostgresPrefix() });
      running = true;
    },
    freeze() {
      signalServer(dataDir, 'SIGSTOP');
    },
    thaw() {
      signalServer(dataDir, 'SIGCONT');
    },
    async remove() {
      await server.stop().catch(() => undefined);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
