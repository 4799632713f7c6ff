import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import pg from 'pg';
import { listMigrationFiles, migrateUp, migrationStatus } from '../../../src/platform/db/migrations.ts';
import { ONLINE_MIGRATION_DEFAULTS, partitionIndexName } from '../../../src/platform/db/onlineMigration.ts';
import { PG, pgCode } from '../../../src/platform/db/pgErrors.ts';
import { splitStatements } from '../../../src/platform/db/sqlStatements.ts';
import { type TestDatabase, createTestDatabase } from '../../support/database.ts';

let db: TestDatabase;
let dir: string;
// Short pauses between tries: the tests hold a lock for about a second, not for a request's deadline.
const quick = { ...ONLINE_MIGRATION_DEFAULTS, lockTimeoutMs: 200, firstBackoffMs: 100, attempts: 5 };

test.before(async () => {
  db = await createTestDatabase();
  dir = mkdtempSync(join(tmpdir(), 'backplane-online-migrations-'));
  await db.pool.query('create table online_marks (id bigint generated always as identity primary key, mark text not null)');
  await db.pool.query(`insert into online_marks (mark) select 'm' || n from generate_series(1, 1000) as n`);
});

test.after.always(async () => {
  await db?.drop();
  rmSync(dir, { recursive: true, force: true });
});

/** Every landed migration plus the given ones, as migrateUp would list them from one folder. */
function withMigrations(added: Record<string, string>) {
  for (const [name, sql] of Object.entries(added)) {
    writeFileSync(join(dir, name), sql);
  }
  return [
    ...listMigrationFiles(),
    ...listMigrationFiles(dir).filter((file) => file.name in Object.fromEntries(Object.keys(added).map((name) => [name.replace(/\.sql$/, ''), true]))),
  ];
}

/** The SQLSTATE at the end of the cause chain (umzug and the runner each wrap the error). */
const rootCode = (error: unknown): string | undefined => pgCode(error) ?? ((error as Error | undefined)?.cause ? rootCode((error as Error).cause) : undefined);

const indexValid = async (name: string) =>
  (await db.pool.query<{ valid: boolean }>('select indisvalid as valid from pg_index where indexrelid = to_regclass($1)', [name])).rows[0]?.valid;

test('statements split on semicolons outside comments, quotes and dollar-quoted bodies', (t) => {
  const sql = `-- a; comment\ncreate index concurrently if not exists a on t (x);\ninsert into t values ('a;b', "c;d");\ndo $$ begin perform 1; end $$;\n/* x; */`;
  t.deepEqual(splitStatements(sql), [
    '-- a; comment\ncreate index concurrently if not exists a on t (x)',
    `insert into t values ('a;b', "c;d")`,
    'do $$ begin perform 1; end $$',
  ]);
});

test('a long partition index name stays within 63 bytes and distinct', (t) => {
  const a = partitionIndexName('audit_events_some_rather_long_index_name_idx', 'audit_events_p202611');
  const b = partitionIndexName('audit_events_some_rather_long_index_name_idx', 'audit_events_p202612');
  t.true(a.length <= 63);
  t.not(a, b);
});

test.serial('a no-transaction migration builds its index CONCURRENTLY and is recorded as run outside a transaction', async (t) => {
  const files = withMigrations({
    '20990101000100_index_online_marks.sql':
      '-- backplane:no-transaction\n-- Test: an index built without blocking writes.\ncreate index concurrently if not exists online_marks_mark_idx on online_marks (mark);\n',
  });
  t.deepEqual((await migrationStatus(db.pool, files)).noTransaction, ['20990101000100_index_online_marks']);
  t.deepEqual(await migrateUp(db.pool, files, quick), ['20990101000100_index_online_marks']);
  t.true(await indexValid('online_marks_mark_idx'));
  const { rows } = await db.pool.query<{ transactional: boolean }>('select transactional from schema_migrations where version = 20990101000100');
  t.false(rows[0]!.transactional);
  const status = await migrationStatus(db.pool, files);
  t.is(status.pending, 0);
  t.deepEqual(status.noTransaction, ['20990101000100_index_online_marks']);
});

test.serial('an INVALID index left by a failed CONCURRENTLY build is dropped and built again, not taken for done', async (t) => {
  await db.pool.query(`insert into online_marks (mark) values ('twin'), ('twin')`);
  // A unique build over duplicates fails after creating the index: it stays, INVALID.
  await t.throwsAsync(db.pool.query('create unique index concurrently online_marks_unique_idx on online_marks (mark)'));
  t.false(await indexValid('online_marks_unique_idx'));
  await db.pool.query(`delete from online_marks where mark = 'twin'`);
  const files = withMigrations({
    '20990101000200_unique_online_marks.sql':
      '-- backplane:no-transaction\ncreate unique index concurrently if not exists online_marks_unique_idx on online_marks (mark);\n',
  });
  await migrateUp(db.pool, files, quick);
  t.true(await indexValid('online_marks_unique_idx'));
});

test.serial('an index on the partitioned audit_events is built partition by partition and ends valid on every one', async (t) => {
  await db.pool.query(
    `insert into audit_events (actor_kind, action, outcome, user_agent) select 'system', 'test.online.index', 'success', 'ua' || n from generate_series(1, 500) as n`,
  );
  const files = withMigrations({
    '20990101000300_index_audit_user_agent.sql':
      '-- backplane:no-transaction\ncreate index concurrently if not exists audit_events_test_agent_idx on audit_events (user_agent);\n',
  });
  await migrateUp(db.pool, files, quick);
  t.true(await indexValid('audit_events_test_agent_idx'));
  const { rows } = await db.pool.query<{ partitions: string; indexed: string }>(
    `select (select count(*) from pg_inherits where inhparent = 'audit_events'::regclass) as partitions,
            (select count(*) from pg_inherits i join pg_index x on x.indexrelid = i.inhrelid
              where i.inhparent = 'audit_events_test_agent_idx'::regclass and x.indisvalid) as indexed`,
  );
  t.is(rows[0]!.indexed, rows[0]!.partitions);
});

test.serial('a migration that times out on a lock tries again and applies once the lock is released', async (t) => {
  const holder = new pg.Client({ connectionString: db.url });
  await holder.connect();
  try {
    await holder.query('begin');
    await holder.query('lock table online_marks in access share mode');
    const files = withMigrations({ '20990101000400_add_online_marks_note.sql': `alter table online_marks add column note text not null default '';\n` });
    const migrating = migrateUp(db.pool, files, quick);
    // Longer than one try's lock timeout, shorter than the tries' pauses together.
    await new Promise((resolve) => setTimeout(resolve, 700));
    await holder.query('commit');
    t.deepEqual(await migrating, ['20990101000400_add_online_marks_note']);
  } finally {
    await holder.end();
  }
  t.is((await db.pool.query(`select 1 from information_schema.columns where table_name = 'online_marks' and column_name = 'note'`)).rowCount, 1);
});

test.serial('a lock never released fails the migration with lock_not_available after the bounded tries, and records nothing', async (t) => {
  const holder = new pg.Client({ connectionString: db.url });
  await holder.connect();
  try {
    await holder.query('begin');
    await holder.query('lock table online_marks in access share mode');
    const files = withMigrations({ '20990101000500_add_online_marks_tag.sql': `alter table online_marks add column tag text not null default '';\n` });
    const error = await t.throwsAsync(migrateUp(db.pool, files, { ...quick, attempts: 3 }));
    t.is(rootCode(error), PG.lockNotAvailable);
    t.is((await migrationStatus(db.pool, files)).pending, 1);
  } finally {
    await holder.query('rollback');
    await holder.end();
  }
});
