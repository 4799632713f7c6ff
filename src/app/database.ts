import type pg from 'pg';
import type { Logger } from 'pino';
import { type EmbeddedDatabase, type SupervisionEvents, openEmbeddedDatabase } from '../platform/db/embedded.ts';
import { type Config, ConfigError } from './config.ts';

/** The oldest PostgreSQL Backplane runs on, as `server_version_num` (ADR 0091). */
export const MIN_SERVER_VERSION_NUM = 140000;

export interface DatabaseHandle {
  url: string;
  /** PostgreSQL itself, for what a transaction pooler cannot carry (session advisory lock): DATABASE_LISTEN_URL when set. */
  directUrl: string;
  /** Where the database is, safe to print: never the password. */
  description: string;
  /** For an embedded server found running: who owns it (stops and restarts it), in one sentence. */
  ownership?: string | undefined;
  /** Stops the embedded server when this process owns it (started it, or found it ownerless); otherwise does nothing. */
  release(): Promise<void>;
  /** Keeps the embedded server up (restarts it, takes it over from an owner that exited); does nothing for an external one. */
  supervise(events: SupervisionEvents): void;
}

/** Who stops and restarts an embedded server found running, in one sentence; undefined for one this process started. */
function ownership(embedded: EmbeddedDatabase): string | undefined {
  if (!embedded.found) {
    return undefined;
  }
  if (embedded.owned) {
    return 'no live process owned it (the one that started it was killed): this process owns it now, stops it on exit and restarts it if it dies';
  }
  const owner = embedded.owner === undefined ? 'another running process' : `process ${embedded.owner}`;
  return `it is owned by ${owner}, which stops it on exit and restarts it if it dies; while that process runs, this one only uses it`;
}

/** DATABASE_URL when set; else the embedded PostgreSQL in APP_DATA_DIR, reused if running. */
export async function openDatabase(config: Config, logger?: Logger): Promise<DatabaseHandle> {
  if (config.databaseUrl) {
    const url = new URL(config.databaseUrl);
    return {
      url: config.databaseUrl,
      directUrl: config.databaseListenUrl ?? config.databaseUrl,
      description: `external PostgreSQL at ${url.hostname}`,
      release: async () => undefined,
      supervise: () => undefined,
    };
  }
  const embedded = await openEmbeddedDatabase({
    dataDir: config.dataDir,
    log: (line) => logger?.debug({ postgres: line }, 'embedded postgres'),
  });
  const port = new URL(embedded.url).port;
  return {
    url: embedded.url,
    directUrl: embedded.url,
    description: `embedded PostgreSQL in ${config.dataDir}/postgres on 127.0.0.1:${port}${embedded.found ? ' (found running)' : ''}`,
    ownership: ownership(embedded),
    release: () => embedded.stop(),
    supervise: (events) => embedded.supervise(events),
  };
}

/** Anything that runs a plain query: a pool, a client, or a test's stand-in. */
export interface VersionSource {
  query<R extends pg.QueryResultRow>(text: string): Promise<{ rows: R[] }>;
}

/**
 * Refuses, with one line, a server older than PostgreSQL 14 before anything is migrated or
 * started: on older servers statements fail at run time, some (the limiter's) only quietly.
 */
export async function checkServerVersion(db: VersionSource, description: string): Promise<void> {
  const result = await db.query<{ num: string; version: string }>(
    `select current_setting('server_version_num') as num, current_setting('server_version') as version`,
  );
  const { num, version } = result.rows[0]!;
  if (Number(num) < MIN_SERVER_VERSION_NUM) {
    throw new ConfigError(`the database (${description}) runs PostgreSQL ${version}; Backplane needs PostgreSQL 14 or newer`);
  }
}
