import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type pg from 'pg';
import { Umzug, type UmzugStorage } from 'umzug';
import { packageRoot } from '../packageRoot.ts';
import { appliedWithoutTransaction, ensureLedgerRecordsTransactions } from './migrationLedger.ts';
import { ONLINE_MIGRATION_DEFAULTS, type OnlineMigrationOptions, applyInTransaction, applyWithoutTransaction, runsInTransaction } from './onlineMigration.ts';
import { BACKPLANE_SET, migrationFolders } from './migrationSets.ts';

export const migrationsDir = join(packageRoot, 'migrations');

/** A migration that did not apply: its name and PostgreSQL's words in one line, the driver's error as the cause. */
export class MigrationFailed extends Error {
  override readonly name = 'MigrationFailed';
  readonly migration: string;
  constructor(migration: string, cause: unknown) {
    super(`migration ${migration} failed: ${deepestMessage(cause)}`, { cause });
    this.migration = migration;
  }
}

/** The message of the innermost cause: what PostgreSQL said, not what wrapped it. */
function deepestMessage(error: unknown): string {
  let current = error;
  while (current instanceof Error && current.cause instanceof Error) {
    current = current.cause;
  }
  return (current instanceof Error ? current.message : String(current)).split('\n')[0]!;
}

/** The MigrationFailed inside umzug's wrapping, if that is what an error is. */
function migrationFailure(error: unknown): MigrationFailed | undefined {
  for (let current = error; current instanceof Error; current = current.cause) {
    if (current instanceof MigrationFailed) {
      return current;
    }
  }
  return undefined;
}

const FILE_PATTERN = /^(\d{14})_[a-z0-9_]+\.sql$/;
/** Held while migrating, so instances or commands starting together cannot both migrate. */
const MIGRATION_LOCK_KEY = 72_010_531;

export interface MigrationFile {
  version: number;
  name: string;
  path: string;
  /** Whose migration it is: backplane, or the application built on it (migrationSets.ts). */
  set: string;
}

export interface MigrationStatus {
  current: number;
  latest: number;
  pending: number;
  pendingNames: string[];
  /** Versions applied in the database that this code does not know: the database is ahead. */
  unknown: number[];
  /** Applied (per the ledger) or pending (per the file) migrations that run outside a transaction. */
  noTransaction: string[];
}

/** The files of one folder, or without one of every set (Backplane's and the application's) in one order. */
export function listMigrationFiles(dir?: string): MigrationFile[] {
  const folders = dir === undefined ? migrationFolders() : [{ set: BACKPLANE_SET, dir }];
  const files = folders
    .flatMap((folder) =>
      readdirSync(folder.dir)
        .filter((name) => FILE_PATTERN.test(name))
        .map((name) => ({ version: Number(FILE_PATTERN.exec(name)![1]), name: name.replace(/\.sql$/, ''), path: join(folder.dir, name), set: folder.set })),
    )
    .sort((a, b) => a.version - b.version);
  const twice = files.find((file, index) => index > 0 && files[index - 1]!.version === file.version);
  if (twice) {
    throw new Error(
      `two migrations have version ${twice.version} (${files
        .filter((file) => file.version === twice.version)
        .map((file) => file.path)
        .join(', ')}): rename the one no database has applied to a newer timestamp; an applied migration keeps its file and version (ADR 0133)`,
    );
  }
  return files;
}

const createLedgerSql = `
create table if not exists schema_migrations (
  version bigint primary key,
  name text not null,
  applied_at timestamptz not null default now()
)`;

const selectAppliedSql = `
select version::text as version, name from schema_migrations order by version`;

const insertAppliedSql = `
insert into schema_migrations (version, name, transactional) values ($1, $2, $3)`;

export async function appliedVersions(db: pg.ClientBase | pg.Pool): Promise<number[]> {
  const exists = await db.query<{ found: boolean }>(`select to_regclass('schema_migrations') is not null as found`);
  if (!exists.rows[0]?.found) {
    return [];
  }
  const result = await db.query<{ version: string }>(selectAppliedSql);
  return result.rows.map((row) => Number(row.version));
}

export async function migrationStatus(db: pg.ClientBase | pg.Pool, files = listMigrationFiles()): Promise<MigrationStatus> {
  const applied = new Set(await appliedVersions(db));
  const known = new Set(files.map((file) => file.version));
  const pendingFiles = files.filter((file) => !applied.has(file.version));
  return {
    current: Math.max(0, ...applied),
    latest: Math.max(0, ...known),
    pending: pendingFiles.length,
    pendingNames: pendingFiles.map((file) => file.name),
    unknown: [...applied].filter((version) => !known.has(version)),
    noTransaction: [
      ...(await appliedWithoutTransaction(db)),
      ...pendingFiles.filter((file) => !runsInTransaction(readFileSync(file.path, 'utf8'))).map((file) => file.name),
    ],
  };
}

/** Ledger rows are written by each migration inside its own transaction, so storage only reads. */
function ledger(client: pg.ClientBase, files: MigrationFile[]): UmzugStorage {
  return {
    async executed() {
      const applied = new Set(await appliedVersions(client));
      return files.filter((file) => applied.has(file.version)).map((file) => file.name);
    },
    async logMigration() {},
    async unlogMigration() {
      throw new Error('migrations are never reverted');
    },
  };
}

/**
 * Applies pending migrations in order, each in its own transaction with its ledger row (or
 * statement by statement when marked `-- backplane:no-transaction`), with a lock timeout and a
 * retry (ADR 0125), under an advisory lock. Returns the names applied.
 */
export async function migrateUp(pool: pg.Pool, files = listMigrationFiles(), online: OnlineMigrationOptions = ONLINE_MIGRATION_DEFAULTS): Promise<string[]> {
  const client = await pool.connect();
  try {
    await client.query('select pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    await client.query(createLedgerSql);
    await ensureLedgerRecordsTransactions(client);
    const umzug = new Umzug({
      logger: undefined,
      storage: ledger(client, files),
      migrations: files.map((file) => ({
        name: file.name,
        path: file.path,
        async up() {
          const sql = readFileSync(file.path, 'utf8');
          const transactional = runsInTransaction(sql);
          const record = () => client.query(insertAppliedSql, [file.version, file.name, transactional]);
          try {
            await (transactional ? applyInTransaction : applyWithoutTransaction)(client, sql, record, online);
          } catch (error) {
            throw new MigrationFailed(file.name, error);
          }
        },
      })),
    });
    const applied = await umzug.up().catch((error: unknown) => {
      throw migrationFailure(error) ?? error;
    });
    return applied.map((migration) => migration.name);
  } finally {
    await client.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
    client.release();
  }
}
