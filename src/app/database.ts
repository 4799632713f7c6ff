import type { Logger } from 'pino';
import { type SupervisionEvents, openEmbeddedDatabase } from '../platform/db/embedded.ts';
import type { Config } from './config.ts';

export interface DatabaseHandle {
  url: string;
  /** Where the database is, safe to print: never the password. */
  description: string;
  /** Stops the embedded server when this process started it; otherwise does nothing. */
  release(): Promise<void>;
  /** Restarts the embedded server if it dies (one this process started); does nothing otherwise. */
  supervise(events: SupervisionEvents): void;
}

/** DATABASE_URL when set; else the embedded PostgreSQL in APP_DATA_DIR, reused if running. */
export async function openDatabase(config: Config, logger?: Logger): Promise<DatabaseHandle> {
  if (config.databaseUrl) {
    const url = new URL(config.databaseUrl);
    return { url: config.databaseUrl, description: `external PostgreSQL at ${url.hostname}`, release: async () => undefined, supervise: () => undefined };
  }
  const embedded = await openEmbeddedDatabase({
    dataDir: config.dataDir,
    log: (line) => logger?.debug({ postgres: line }, 'embedded postgres'),
  });
  const port = new URL(embedded.url).port;
  return {
    url: embedded.url,
    description: `embedded PostgreSQL in ${config.dataDir}/postgres on 127.0.0.1:${port}${embedded.owned ? '' : ' (already running)'}`,
    release: () => embedded.stop(),
    supervise: (events) => embedded.supervise(events),
  };
}
