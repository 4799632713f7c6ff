import { existsSync, readdirSync } from 'node:fs';
import pg from 'pg';

const FILE_PATTERN = /^(\d{14})_[a-z0-9_]+\.sql$/;

const migrationsIn = (dir: string) =>
  existsSync(dir)
    ? readdirSync(dir)
        .filter((name) => FILE_PATTERN.test(name))
        .map((name) => ({ version: FILE_PATTERN.exec(name)![1]!, name: name.replace(/\.sql$/, '') }))
    : [];

/** The migrations a database has applied, version (as text) to name; none when it has no ledger yet. */
export type AppliedMigrations = () => Promise<Map<string, string>>;

/** What the ledger of a database holds, read through a pool or a client it is given. */
export async function appliedMigrationsIn(db: pg.Pool | pg.ClientBase): Promise<Map<string, string>> {
  const exists = await db.query<{ found: boolean }>(`select to_regclass('schema_migrations') is not null as found`);
  if (!exists.rows[0]?.found) {
    return new Map();
  }
  const { rows } = await db.query<{ version: string; name: string }>(`select version::text as version, name from schema_migrations`);
  return new Map(rows.map((row) => [row.version, row.name]));
}

/** What the ledger of the database at url holds, on a connection of its own. */
export async function appliedMigrationsAt(url: string): Promise<Map<string, string>> {
  const client = new pg.Client({ connectionString: url, application_name: 'backplane-upgrade' });
  try {
    await client.connect();
    return await appliedMigrationsIn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * A migration of the new release with the version of one of the application's, and what to do,
 * in one line; undefined when there is none. The ledger keys migrations by version, so renaming an
 * application's migration that a database has applied would run it again there and count the
 * release's as applied: only one no database has applied may be renamed.
 */
export async function migrationClash(
  release: { dir: string; version: string },
  applicationFolders: string[],
  applied: AppliedMigrations,
): Promise<string | undefined> {
  const released = new Map(migrationsIn(release.dir).map((file) => [file.version, file.name]));
  const clash = applicationFolders.flatMap(migrationsIn).find((file) => released.has(file.version));
  if (!clash) {
    return undefined;
  }
  const theirs = released.get(clash.version)!;
  const stated = `backplane ${release.version}'s migration ${theirs} has the version of the application's ${clash.name}`;
  if ((await applied()).get(clash.version) === clash.name) {
    return `${stated}, which your database has applied: keep ${clash.name} and its version (renamed, it would run again and ${theirs} would count as applied); stay on the release you run and report the clash: the release's migration, applied nowhere yet, is the one to renumber (ADR 0133)`;
  }
  return `${stated}, which your database has not applied: rename ${clash.name} to a newer timestamp (if no other database applied it either), commit, and run upgrade again`;
}
