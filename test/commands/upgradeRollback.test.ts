import { existsSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import pg from 'pg';
import { appliedMigrationsAt, migrationClash } from '../../src/commands/upgradeMigrationClash.ts';
import { KEPT_DIR, snapshotWorkingTree } from '../../src/commands/upgradeRollback.ts';
import { createScratchDatabase } from '../../src/commands/upgradeScratchDatabase.ts';
import { firstReason } from '../../src/commands/upgradeSteps.ts';
import { createTestDatabase } from '../support/database.ts';

// The parts that make an application's upgrade safe to walk away from (ADR 0133), each on its own;
// test/application/newApplication.test.ts runs them together in a real application.

const folder = mkdtempSync(join(tmpdir(), 'backplane-rollback-'));
test.after.always(() => rmSync(folder, { recursive: true, force: true }));

test('a failed step is told by its first line, found where each program prints it', (t) => {
  t.is(
    firstReason('install', 'npm error code ENOENT\nnpm error syscall open\nnpm error enoent Could not read package.json\n', 'exited 1'),
    'enoent Could not read package.json',
  );
  t.is(
    firstReason('load', "> x\nbackplane: the application did not load: The requested module 'backplane' does not provide an export named 'gone'\n", 'exited 1'),
    "the application did not load: The requested module 'backplane' does not provide an export named 'gone'",
  );
  t.is(
    firstReason('migrations', 'backplane: migration 20990101000000_broken failed: division by zero\n', 'exited 1'),
    'migration 20990101000000_broken failed: division by zero',
  );
  const stack =
    "backplane: failed: MigrationError: Migration 20990101000000_broken (up) failed: Original error: migration 20990101000000_broken failed\n  cause: Error: migration 20990101000000_broken failed\n    [cause]: error: division by zero\n      code: '22012'\n";
  t.is(firstReason('migrations', stack, 'exited 1'), 'migration 20990101000000_broken failed: division by zero');
  t.is(
    firstReason('tests', "src/a.ts(1,10): error TS2305: Module '\"backplane\"' has no exported member 'gone'.\n", 'exited 2'),
    "src/a.ts(1,10): error TS2305: Module '\"backplane\"' has no exported member 'gone'.",
  );
  t.is(firstReason('tests', '✔ passes (1ms)\n✖ a test that fails (2.5ms)\n✖ failing tests:\n', 'exited 1'), 'a test that fails');
  t.is(firstReason('tests', 'TAP version 13\nnot ok 2 - a test that fails\n', 'exited 1'), 'a test that fails');
  t.is(firstReason('tests', 'nothing useful\n', 'npm test exited 1'), 'npm test exited 1');
});

test('a snapshot puts package.json, the lock files and node_modules back as they were, links included', async (t) => {
  const app = join(folder, 'app');
  mkdirSync(join(app, 'node_modules', 'backplane'), { recursive: true });
  mkdirSync(join(app, 'node_modules', '.bin'));
  writeFileSync(join(app, 'package.json'), '{"dependencies":{"backplane":"^0.5.0"}}\n');
  writeFileSync(join(app, 'package-lock.json'), '{"lockfileVersion":3}\n');
  writeFileSync(join(app, 'node_modules', 'backplane', 'package.json'), '{"version":"0.5.0"}\n');
  symlinkSync('../backplane/cli.js', join(app, 'node_modules', '.bin', 'backplane'));
  const snapshot = await snapshotWorkingTree(app);
  t.true(existsSync(join(app, KEPT_DIR, 'node_modules', 'backplane', 'package.json')));
  // What an install does: new files, a new package, a lock file that did not exist.
  writeFileSync(join(app, 'package.json'), '{"dependencies":{"backplane":"^0.7.0"}}\n');
  writeFileSync(join(app, 'backplane.lock'), '{}\n');
  writeFileSync(join(app, 'node_modules', 'backplane', 'package.json'), '{"version":"0.7.0"}\n');
  mkdirSync(join(app, 'node_modules', 'new-dependency'));
  await snapshot.restore();
  t.is(readFileSync(join(app, 'package.json'), 'utf8'), '{"dependencies":{"backplane":"^0.5.0"}}\n');
  t.is(readFileSync(join(app, 'package-lock.json'), 'utf8'), '{"lockfileVersion":3}\n');
  t.false(existsSync(join(app, 'backplane.lock')));
  t.is(readFileSync(join(app, 'node_modules', 'backplane', 'package.json'), 'utf8'), '{"version":"0.5.0"}\n');
  t.false(existsSync(join(app, 'node_modules', 'new-dependency')));
  t.is(readlinkSync(join(app, 'node_modules', '.bin', 'backplane')), '../backplane/cli.js');
  t.false(existsSync(join(app, KEPT_DIR)));
  t.regex(snapshot.byHand, /^git checkout -- package\.json package-lock\.json && rm -rf node_modules && mv \.backplane-upgrade\/node_modules node_modules/);
});

test('the copy left by a killed upgrade is refused in one line that says how to put it back', async (t) => {
  const app = join(folder, 'killed');
  mkdirSync(join(app, KEPT_DIR, 'node_modules'), { recursive: true });
  writeFileSync(join(app, 'package.json'), '{}\n');
  const error = await t.throwsAsync(snapshotWorkingTree(app));
  t.regex(error!.message, /left from an upgrade that was killed: .*mv \.backplane-upgrade\/node_modules node_modules/);
  t.true(existsSync(join(app, KEPT_DIR, 'node_modules')));
});

test.serial("the throw-away database is a copy of the developer's when nobody is connected to it, else an empty one that says why", async (t) => {
  const adminUrl = process.env.BACKPLANE_TEST_ADMIN_URL!;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  t.teardown(async () => {
    await admin.query('drop database if exists developers with (force)');
    await admin.end();
  });
  await admin.query('create database developers');
  const url = adminUrl.replace(/\/postgres$/, '/developers');
  const developer = new pg.Client({ connectionString: url });
  await developer.connect();
  await developer.query('create table developers_data (id int); insert into developers_data values (1), (2)');
  // Connected, as a running npm start is: no copy.
  const empty = await createScratchDatabase(url, 'the test database');
  t.false(empty.copy);
  t.regex(empty.why!, /being accessed by other users/);
  const emptyClient = new pg.Client({ connectionString: empty.url });
  await emptyClient.connect();
  t.is((await emptyClient.query(`select to_regclass('developers_data') as found`)).rows[0].found, null);
  await emptyClient.end();
  await empty.drop();
  await developer.end();
  const copy = await createScratchDatabase(url, 'the test database');
  t.true(copy.copy);
  const client = new pg.Client({ connectionString: copy.url });
  await client.connect();
  t.is((await client.query('select count(*)::int as n from developers_data')).rows[0].n, 2);
  await client.end();
  await copy.drop();
  t.is((await admin.query(`select count(*)::int as n from pg_database where datname like 'developers_upgrade_%'`)).rows[0].n, 0);
});

test.serial("a release migration with the version of an application's: renaming is advised only for one the database has not applied", async (t) => {
  const db = await createTestDatabase();
  t.teardown(() => db.drop());
  const release = join(folder, 'release-migrations');
  const own = join(folder, 'application-migrations');
  mkdirSync(release);
  mkdirSync(own);
  writeFileSync(join(release, '20991231000000_create_release_things.sql'), 'select 1;\n');
  writeFileSync(join(own, '20991231000000_create_own_things.sql'), 'select 1;\n');
  writeFileSync(join(own, '20991231000001_create_more_things.sql'), 'select 1;\n');
  const unapplied = await migrationClash({ dir: release, version: '0.7.0' }, [own, join(folder, 'missing')], () => appliedMigrationsAt(db.url));
  t.regex(unapplied!, /has not applied: rename 20991231000000_create_own_things to a newer timestamp/);
  // The version applied as the release's own: the application's is still the unapplied one.
  await db.pool.query(`insert into schema_migrations (version, name) values (20991231000000, '20991231000000_create_release_things')`);
  t.regex(
    (await migrationClash({ dir: release, version: '0.7.0' }, [own], () => appliedMigrationsAt(db.url)))!,
    /has not applied: rename 20991231000000_create_own_things/,
  );
  await db.pool.query(`update schema_migrations set name = '20991231000000_create_own_things' where version = 20991231000000`);
  const applied = await migrationClash({ dir: release, version: '0.7.0' }, [own], () => appliedMigrationsAt(db.url));
  t.regex(applied!, /which your database has applied: keep 20991231000000_create_own_things and its version/);
  t.notRegex(applied!, /rename 20991231000000_create_own_things/);
  rmSync(join(release, '20991231000000_create_release_things.sql'));
  t.is(await migrationClash({ dir: release, version: '0.7.0' }, [own], () => appliedMigrationsAt(db.url)), undefined);
});
