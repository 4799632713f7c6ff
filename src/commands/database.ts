import { type Config, loadConfig } from '../app/config.ts';
import { checkServerVersion, openDatabase } from '../app/database.ts';
import { databaseFailure } from '../app/databaseFailure.ts';
import { releaseDatabaseOnSignal } from '../app/databaseSignals.ts';
import { type InstrumentedPool, createPool } from '../platform/db/pool.ts';
import { printConfigWarnings } from './configWarnings.ts';
import { requireCurrentSchema } from './schemaRequired.ts';

/**
 * Runs a command against DATABASE_URL or the embedded database (the running one, or started for
 * the command's duration and stopped however it ends). It never migrates: with schema 'current' a
 * database lacking any of the code's migrations is refused in one line; 'any' is for the commands
 * that read or change the schema itself (migrate, upgrade, doctor).
 */
export async function withDatabase<T>(
  work: (pool: InstrumentedPool, context: { url: string; config: Config }) => Promise<T>,
  options: { schema: 'current' | 'any' },
): Promise<T> {
  const config = loadConfig();
  printConfigWarnings(config);
  const opening = openDatabase(config);
  // Nothing the command starts outlives it: a signal stops the server too (thrown errors: the finally below).
  const stopHandlingSignals = releaseDatabaseOnSignal(opening);
  const database = await opening.catch((error: unknown) => {
    stopHandlingSignals();
    throw error;
  });
  // migrate up takes a session advisory lock: commands connect past any transaction pooler.
  const pool = createPool({ connectionString: database.directUrl, max: 2, applicationName: 'backplane-cli' });
  try {
    // The first statement is the first contact: a refused or unreachable server is one line, exit 2.
    await checkServerVersion(pool, database.description).catch((error: unknown) => {
      throw databaseFailure(error, config);
    });
    if (options.schema === 'current') {
      await requireCurrentSchema(pool);
    }
    return await work(pool, { url: database.url, config });
  } finally {
    await pool.end();
    await database.release();
    stopHandlingSignals();
  }
}
