import type pg from 'pg';
import { sleep } from '../time.ts';
import { type MigrationFile, listMigrationFiles, migrationStatus } from './migrations.ts';

export interface SchemaWaitOptions {
  /** Between two reads of the ledger. */
  pollMs: number;
  /** Between two log lines saying what the wait is for. */
  logEveryMs: number;
}

/**
 * Returns once every migration this code knows is applied (a database ahead is fine: the previous
 * release serves a newer schema during a rollout, ADR 0125). Until then nothing is forked, so the
 * pod never turns ready on a schema it cannot serve; `waiting` says why at once and then now and then.
 */
export async function waitForSchema(
  pool: pg.Pool,
  waiting: (pending: string[]) => void,
  options: SchemaWaitOptions = { pollMs: 2_000, logEveryMs: 30_000 },
  files: MigrationFile[] = listMigrationFiles(),
): Promise<void> {
  let loggedAt = -Infinity;
  for (;;) {
    const status = await migrationStatus(pool, files);
    if (status.pending === 0) {
      return;
    }
    if (Date.now() - loggedAt >= options.logEveryMs) {
      waiting(status.pendingNames);
      loggedAt = Date.now();
    }
    await sleep(options.pollMs);
  }
}
