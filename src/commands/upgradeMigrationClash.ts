import { existsSync, readdirSync } from 'node:fs';
import pg from 'pg';

const FILE_PATTERN = /^(\d{14})_[a-z0-9_]+\.sql$/;

const migrationsIn = (dir: string) =>
  existsSync(dir) ? readdirSync(dir).filter((name) => FILE_PATTERN.test(name)).map((name) => ({ version: FILE_PATTERN.exec(name)![1]!, name: name.replace(/\.sql$/, '') })) : [];

/** The versions the developer's database has applied; none when it cannot say (no ledger yet). */
async function appliedVersions(url: string): Promise<Set<string>> {
  const client = new pg.Client({ connectionString: url, application_name: 'backplane-upgrade' });
  try {
    await client.connect();
    const { rows } = await client.query<{ version: string }>(`select version::text as version from schema_migrations`);
    return new Set(rows.map((row) => row.version));
  } catch {
    return new Set();
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
export async function migrationClash(release: { dir: string; version: string }, applicationFolders: string[], databaseUrl: string): Promise<string | undefined> {
  const released = new Map(migrationsIn(release.dir).map((file) => [file.version, file.name]));
  const clash = applicationFolders.flatMap(migrationsIn).find((file) => released.has(file.version));
  if (!clash) {
    return undefined;
  }
  const theirs = released.get(clash.version)!;
  const stated = `backplane ${release.version}'s migration ${theirs} has the version of the application's ${clash.name}`;
  if ((await appliedVersions(databaseUrl)).has(clash.version)) {
    return `${stated}, which your database has applied: keep ${clash.name} and its version (renamed, it would run again and ${theirs} would count as applied); stay on the release you run and report the clash: the release's migration, applied nowhere yet, is the one to renumber (ADR 0133)`;
  }
  return `${stated}, which your database has not applied: rename ${clash.name} to a newer timestamp (if no other database applied it either), commit, and run upgrade again`;
}
