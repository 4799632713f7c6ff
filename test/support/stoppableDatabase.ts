import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type EmbeddedDatabase, openEmbeddedDatabase } from '../../src/platform/db/embedded.ts';
import { migrateUp } from '../../src/platform/db/migrations.ts';
import { type InstrumentedPool, createPool } from '../../src/platform/db/pool.ts';

/**
 * A migrated PostgreSQL of a test file's own, for tests that stop the database on purpose (the
 * shared test server must keep running for every other file). Restarts on the same port.
 */
export interface StoppableDatabase {
  url: string;
  stop(): Promise<void>;
  restart(): Promise<void>;
  /** Stops it if running and deletes its files. */
  remove(): Promise<void>;
}

export async function startStoppableDatabase(prepare: (pool: InstrumentedPool) => Promise<void> = async () => undefined): Promise<StoppableDatabase> {
  const dataDir = mkdtempSync(join(tmpdir(), 'backplane-stoppable-'));
  // As root the server runs as the postgres user, which must be able to enter this folder.
  chmodSync(dataDir, 0o755);
  let server: EmbeddedDatabase = await openEmbeddedDatabase({ dataDir, fast: true });
  const port = Number(new URL(server.url).port);
  const pool = createPool({ connectionString: server.url, max: 2, applicationName: 'test' });
  try {
    await migrateUp(pool);
    await prepare(pool);
  } finally {
    await pool.end();
  }
  return {
    url: server.url,
    stop: () => server.stop(),
    async restart() {
      server = await openEmbeddedDatabase({ dataDir, fast: true, port });
    },
    async remove() {
      await server.stop().catch(() => undefined);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
