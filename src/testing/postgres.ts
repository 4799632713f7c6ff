import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { type Application, useApplication } from '../app/application.ts';
import { openEmbeddedDatabase } from '../platform/db/embedded.ts';
import { migrateUp } from '../platform/db/migrations.ts';
import { TEMPLATE_DATABASE, testPostgresPrefix } from './database.ts';

/** A throw-away embedded PostgreSQL for a test run, with the migrated template createTestDatabase clones. */
export interface TestPostgres {
  /** The server's `postgres` database: createTestDatabase clones the migrated template through it. */
  adminUrl: string;
  /** The server's major.minor version. */
  version: string;
  /** Stops the server and deletes its files. */
  stop(): Promise<void>;
}

/**
 * A throw-away embedded PostgreSQL with a template database migrated to Backplane's migrations and
 * the application's; sets BACKPLANE_TEST_ADMIN_URL, so createTestDatabase clones the template.
 */
export async function startTestPostgres(options: { application?: Application } = {}): Promise<TestPostgres> {
  const dataDir = mkdtempSync(join(tmpdir(), 'backplane-test-'));
  // As root the server runs as the postgres user, which must be able to enter this folder.
  chmodSync(dataDir, 0o755);
  const server = await openEmbeddedDatabase({ dataDir, fast: true, packagePrefix: testPostgresPrefix() });
  const adminUrl = server.url.replace(/\/backplane$/, '/postgres');
  const stop = async () => {
    await server.stop().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`create database ${TEMPLATE_DATABASE}`);
    const version = (await admin.query<{ server_version: string }>('show server_version')).rows[0]!.server_version;
    await admin.end();
    const templatePool = new pg.Pool({ connectionString: server.url.replace(/\/backplane$/, `/${TEMPLATE_DATABASE}`), max: 1 });
    try {
      // The application's migrations join Backplane's (migrationSets.ts): one order, one lock.
      if (options.application) {
        useApplication(options.application);
      }
      await migrateUp(templatePool);
    } finally {
      await templatePool.end();
    }
    process.env.BACKPLANE_TEST_ADMIN_URL = adminUrl;
    return { adminUrl, version, stop };
  } catch (error) {
    // A migration that fails must not leave the server running behind the failed run.
    await stop();
    throw error;
  }
}
