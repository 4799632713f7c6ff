import test from 'ava';
import { listMigrationFiles, migrateUp, migrationStatus } from '../../src/platform/db/migrations.ts';
import { runCli, startCluster, waitFor } from '../support/cluster.ts';
import { createTestDatabase } from '../support/database.ts';

// APP_MIGRATIONS=wait, as the Kubernetes kit runs serve: a pod started before the migrate Job ran.
test('serve with APP_MIGRATIONS=wait starts no instance on a schema it needs migrations for, and serves once `migrate up` applied them', async (t) => {
  const db = await createTestDatabase({ migrated: false });
  try {
    const files = listMigrationFiles();
    await migrateUp(db.pool, files.slice(0, -1));
    const starting = startCluster(db.url, 1, { APP_MIGRATIONS: 'wait' });
    starting.catch(() => undefined);
    // The primary is connected and reading the ledger, yet applies nothing and forks nothing.
    await waitFor(
      async () => ((await db.pool.query(`select 1 from pg_stat_activity where application_name = 'backplane-migrate'`)).rowCount ? true : undefined),
      30_000,
      'the primary to connect',
    );
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    t.is((await migrationStatus(db.pool, files)).pending, 1);
    t.is((await db.pool.query('select 1 from release_instances')).rowCount, 0);
    const migrated = await runCli(['migrate', 'up'], { DATABASE_URL: db.url });
    t.is(migrated.code, 0, migrated.stderr);
    const cluster = await starting;
    try {
      t.is((await fetch(`${cluster.url}/readyz`)).status, 200);
      t.regex(cluster.output(), /waiting for 1 migration/);
    } finally {
      t.is(await cluster.stop(), 0);
    }
  } finally {
    await db.drop();
  }
});
