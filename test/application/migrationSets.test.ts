import test from 'ava';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CompositionError, defineApplication, useApplication } from '../../src/app/application.ts';
import { backplaneModules } from '../../src/app/backplaneModules.ts';
import { APPLICATION_SET, BACKPLANE_SET, useApplicationMigrations, useModuleMigrations } from '../../src/platform/db/migrationSets.ts';
import { defineModule } from '../../src/platform/module.ts';
import { MigrationFailed, listMigrationFiles, migrateUp, migrationStatus } from '../../src/platform/db/migrations.ts';
import { createTestDatabase } from '../support/database.ts';

// An application's migrations/ folder: one older than Backplane's newest (it still runs, in version order), one newer.
const folder = mkdtempSync(join(tmpdir(), 'backplane-app-migrations-'));
writeFileSync(join(folder, '20200101000000_create_early_notes.sql'), 'create table early_notes (id bigint primary key);\n');
writeFileSync(join(folder, '20991231000000_create_late_notes.sql'), 'create table late_notes (id bigint primary key);\n');

test.afterEach.always(() => {
  useApplicationMigrations(undefined);
  useModuleMigrations([]);
});
test.after.always(() => rmSync(folder, { recursive: true, force: true }));

test.serial("an application's migrations run with Backplane's, in one order by version, each labelled with its set", async (t) => {
  const own = listMigrationFiles();
  useApplicationMigrations(folder);
  const files = listMigrationFiles();
  t.is(files.length, own.length + 2);
  t.deepEqual(
    files.map((file) => file.version),
    [...files.map((file) => file.version)].sort((a, b) => a - b),
  );
  t.deepEqual(
    files.filter((file) => file.set === APPLICATION_SET).map((file) => file.name),
    ['20200101000000_create_early_notes', '20991231000000_create_late_notes'],
  );
  t.is(files.filter((file) => file.set === BACKPLANE_SET).length, own.length);

  // The template database holds Backplane's migrations: only the application's are pending.
  const db = await createTestDatabase();
  t.teardown(() => db.drop());
  t.like(await migrationStatus(db.pool), { pending: 2, unknown: [] });
  t.deepEqual(await migrateUp(db.pool), ['20200101000000_create_early_notes', '20991231000000_create_late_notes']);
  t.like(await migrationStatus(db.pool), { pending: 0, unknown: [] });
  const tables = await db.pool.query<{ name: string }>(`select to_regclass('early_notes')::text as name union all select to_regclass('late_notes')::text`);
  t.deepEqual(
    tables.rows.map((row) => row.name),
    ['early_notes', 'late_notes'],
  );

  // Without the application's folder, its applied migrations are ones this code does not know.
  useApplicationMigrations(undefined);
  t.deepEqual((await migrationStatus(db.pool)).unknown.sort(), [20200101000000, 20991231000000]);
});

test.serial('two processes migrating an empty database together apply every migration of both sets once, under one lock', async (t) => {
  useApplicationMigrations(folder);
  const db = await createTestDatabase({ migrated: false });
  t.teardown(() => db.drop());
  const [first, second] = await Promise.all([migrateUp(db.pool), migrateUp(db.pool)]);
  t.deepEqual(
    [...first, ...second].sort(),
    listMigrationFiles()
      .map((file) => file.name)
      .sort(),
  );
  const ledger = await db.pool.query<{ count: string }>('select count(*) from schema_migrations');
  t.is(Number(ledger.rows[0]!.count), listMigrationFiles().length);
});

test.serial("an application migration with the version of one of Backplane's is refused before anything runs", (t) => {
  const clash = mkdtempSync(join(tmpdir(), 'backplane-app-migrations-'));
  t.teardown(() => rmSync(clash, { recursive: true, force: true }));
  const taken = listMigrationFiles()[0]!.version;
  writeFileSync(join(clash, `${taken}_create_notes.sql`), 'select 1;\n');
  useApplicationMigrations(clash);
  t.throws(() => listMigrationFiles(), { message: new RegExp(`two migrations have version ${taken}`) });
});

test.serial("a migration PostgreSQL refuses fails as MigrationFailed: its name and PostgreSQL's words in one line, nothing after it applied", async (t) => {
  const broken = mkdtempSync(join(tmpdir(), 'backplane-app-migrations-'));
  t.teardown(() => rmSync(broken, { recursive: true, force: true }));
  writeFileSync(join(broken, '20991230000000_divide.sql'), 'select 1/0;\n');
  writeFileSync(join(broken, '20991231000000_create_after.sql'), 'create table after_the_broken (id bigint primary key);\n');
  useApplicationMigrations(broken);
  const db = await createTestDatabase();
  t.teardown(() => db.drop());
  const error = await t.throwsAsync(migrateUp(db.pool), { instanceOf: MigrationFailed });
  t.is(error!.message, 'migration 20991230000000_divide failed: division by zero');
  t.like(await migrationStatus(db.pool), { pending: 2 });
});

test.serial("an application without a migrations folder yet has Backplane's alone", (t) => {
  const own = listMigrationFiles();
  useApplicationMigrations(join(folder, 'missing'));
  t.deepEqual(listMigrationFiles(), own);
});

test.serial("a module carries its own migrations: listed under its name, run with Backplane's and the application's in one order", async (t) => {
  const own = mkdtempSync(join(tmpdir(), 'backplane-module-migrations-'));
  t.teardown(() => rmSync(own, { recursive: true, force: true }));
  writeFileSync(join(own, '20261126120000_create_memos.sql'), 'create table memos (id bigint primary key);\n');
  const memos = defineModule({ name: 'memos', migrations: own });
  useApplication(defineApplication({ name: 'memos-app', modules: [...backplaneModules, memos], migrations: folder }));
  const files = listMigrationFiles();
  t.deepEqual(
    files.map((file) => file.version),
    [...files.map((file) => file.version)].sort((a, b) => a - b),
  );
  t.deepEqual(
    files.filter((file) => file.set !== BACKPLANE_SET).map((file) => `${file.set} ${file.name}`),
    ['application 20200101000000_create_early_notes', 'memos 20261126120000_create_memos', 'application 20991231000000_create_late_notes'],
  );
  const db = await createTestDatabase();
  t.teardown(() => db.drop());
  t.deepEqual(await migrateUp(db.pool), ['20200101000000_create_early_notes', '20261126120000_create_memos', '20991231000000_create_late_notes']);
  t.is((await db.pool.query(`select to_regclass('memos')::text as name`)).rows[0]!.name, 'memos');
});

test("a module with migrations may not take a set's name (backplane, application)", (t) => {
  const named = defineModule({ name: 'application', migrations: folder });
  t.throws(() => defineApplication({ name: 'clash', modules: [...backplaneModules, named] }), { instanceOf: CompositionError });
});
