import test from 'ava';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { APPLICATION_SET, BACKPLANE_SET, useApplicationMigrations } from '../../src/platform/db/migrationSets.ts';
import { listMigrationFiles, migrateUp, migrationStatus } from '../../src/platform/db/migrations.ts';
import { createTestDatabase } from '../support/database.ts';

// An application's migrations/ folder: one older than Backplane's newest (it still runs, in version order), one newer.
const folder = mkdtempSync(join(tmpdir(), 'backplane-app-migrations-'));
writeFileSync(join(folder, '20200101000000_create_early_notes.sql'), 'create table early_notes (id bigint primary key);\n');
writeFileSync(join(folder, '20991231000000_create_late_notes.sql'), 'create table late_notes (id bigint primary key);\n');

test.afterEach.always(() => useApplicationMigrations(undefined));
test.after.always(() => rmSync(folder, { recursive: true, force: true }));

test.serial('an application\'s migrations run with Backplane\'s, in one order by version, each labelled with its set', async (t) => {
  const own = listMigrationFiles();
  useApplicationMigrations(folder);
  const files = listMigrationFiles();
  t.is(files.length, own.length + 2);
  t.deepEqual(files.map((file) => file.version), [...files.map((file) => file.version)].sort((a, b) => a - b));
  t.deepEqual(files.filter((file) => file.set === APPLICATION_SET).map((file) => file.name), ['20200101000000_create_early_notes', '20991231000000_create_late_notes']);
  t.is(files.filter((file) => file.set === BACKPLANE_SET).length, own.length);

  // The template database holds Backplane's migrations: only the application's are pending.
  const db = await createTestDatabase();
  t.teardown(() => db.drop());
  t.like(await migrationStatus(db.pool), { pending: 2, unknown: [] });
  t.deepEqual(await migrateUp(db.pool), ['20200101000000_create_early_notes', '20991231000000_create_late_notes']);
  t.like(await migrationStatus(db.pool), { pending: 0, unknown: [] });
  const tables = await db.pool.query<{ name: string }>(`select to_regclass('early_notes')::text as name union all select to_regclass('late_notes')::text`);
  t.deepEqual(tables.rows.map((row) => row.name), ['early_notes', 'late_notes']);

  // Without the application's folder, its applied migrations are ones this code does not know.
  useApplicationMigrations(undefined);
  t.deepEqual((await migrationStatus(db.pool)).unknown.sort(), [20200101000000, 20991231000000]);
});

test.serial('two processes migrating an empty database together apply every migration of both sets once, under one lock', async (t) => {
  useApplicationMigrations(folder);
  const db = await createTestDatabase({ migrated: false });
  t.teardown(() => db.drop());
  const [first, second] = await Promise.all([migrateUp(db.pool), migrateUp(db.pool)]);
  t.deepEqual([...first, ...second].sort(), listMigrationFiles().map((file) => file.name).sort());
  const ledger = await db.pool.query<{ count: string }>('select count(*) from schema_migrations');
  t.is(Number(ledger.rows[0]!.count), listMigrationFiles().length);
});

test.serial('an application migration with the version of one of Backplane\'s is refused before anything runs', (t) => {
  const clash = mkdtempSync(join(tmpdir(), 'backplane-app-migrations-'));
  t.teardown(() => rmSync(clash, { recursive: true, force: true }));
  const taken = listMigrationFiles()[0]!.version;
  writeFileSync(join(clash, `${taken}_create_notes.sql`), 'select 1;\n');
  useApplicationMigrations(clash);
  t.throws(() => listMigrationFiles(), { message: new RegExp(`two migrations have version ${taken}`) });
});

test.serial('an application without a migrations folder yet has Backplane\'s alone', (t) => {
  const own = listMigrationFiles();
  useApplicationMigrations(join(folder, 'missing'));
  t.deepEqual(listMigrationFiles(), own);
});
