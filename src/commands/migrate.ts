import { listMigrationFiles, migrateUp, migrationStatus } from '../platform/db/migrations.ts';
import { type Flags, UsageError, hasFlag } from './args.ts';
import { withDatabase } from './database.ts';

/** `migrate up` · `migrate status [--json]`: exit 1 when the database is ahead of the code. */
export async function migrate(flags: Flags): Promise<number> {
  const [action] = flags.positional;
  if (action === 'up') {
    const applied = await withDatabase(
      async (pool) => {
        // People at a terminal learn what the wait is for; pipes and logs get only the result.
        if (process.stderr.isTTY) {
          const { pending } = await migrationStatus(pool, listMigrationFiles());
          process.stderr.write(pending ? `… applying ${pending} migration(s) under the advisory lock\n` : '');
        }
        return migrateUp(pool);
      },
      { schema: 'any' },
    );
    console.log(applied.length ? `applied ${applied.length}: ${applied.join(', ')}` : 'nothing to apply: the schema is current');
    return 0;
  }
  if (action === 'status') {
    const files = listMigrationFiles();
    const status = await withDatabase((pool) => migrationStatus(pool, files), { schema: 'any' });
    const pending = new Set(status.pendingNames);
    const ahead = status.unknown.length > 0 || status.current > status.latest;
    if (hasFlag(flags, 'json')) {
      // migrations: Backplane's and the application's, in the one order they run, each with its set.
      const migrations = files.map((file) => ({ version: file.version, name: file.name, set: file.set, applied: !pending.has(file.name) }));
      console.log(
        JSON.stringify({
          current: status.current,
          latest: status.latest,
          pending: status.pending,
          pending_names: status.pendingNames,
          no_transaction: status.noTransaction,
          ahead,
          migrations,
        }),
      );
    } else {
      console.log(`current ${status.current}\nlatest  ${status.latest}\npending ${status.pending}`);
      status.pendingNames.forEach((name) => console.log(`  pending: ${name}`));
      if (ahead) {
        console.error(`the database holds migrations this code does not know (${status.unknown.join(', ')}): run a newer release`);
      }
    }
    return ahead ? 1 : 0;
  }
  throw new UsageError('usage: backplane migrate up | migrate status [--json]');
}
