import type pg from 'pg';
import { appliedVersions, listMigrationFiles } from '../platform/db/migrations.ts';

/** A command refused because the database's schema is behind the code: one line, exit 2. */
export class SchemaNotCurrent extends Error {}

const NAMES_SHOWN = 3;

/**
 * Commands never migrate (only `migrate up`, `serve` and `upgrade` change the schema): a command
 * whose code expects migrations the database lacks refuses before it reads or writes anything.
 * A database ahead of the code (a rollout in progress) is fine: each release's schema keeps the previous one working.
 */
export async function requireCurrentSchema(pool: pg.Pool): Promise<void> {
  const applied = new Set(await appliedVersions(pool));
  const pending = listMigrationFiles().filter((file) => !applied.has(file.version));
  if (pending.length === 0) {
    return;
  }
  if (applied.size === 0) {
    throw new SchemaNotCurrent(
      'the database has no schema yet: run backplane migrate up (or start the service, which applies migrations), then this command again',
    );
  }
  const names =
    pending
      .slice(0, NAMES_SHOWN)
      .map((file) => file.name)
      .join(', ') + (pending.length > NAMES_SHOWN ? ', …' : '');
  throw new SchemaNotCurrent(
    `the database's schema is behind this code, ${pending.length} migration(s) pending (${names}): run backplane migrate up, then this command again`,
  );
}
