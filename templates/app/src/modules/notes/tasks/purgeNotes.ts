import type { PurgeInput, PurgeResult } from 'backplane';
import pg from 'pg';

// One bounded batch of notes older than the cutoff, oldest first.
const deleteNotesBeforeSql = `
delete from notes where id in (select id from notes where created_at < $1 order by created_at limit $2)`;

/** Deletes notes older than the cutoff in batches, each its own statement, so no lock is held long. */
export async function purgeNotes(input: PurgeInput): Promise<PurgeResult> {
  const client = new pg.Client({ connectionString: input.connectionString });
  await client.connect();
  let deleted = 0;
  let statements = 0;
  let longestStatementMs = 0;
  try {
    for (;;) {
      const started = performance.now();
      const count = (await client.query(deleteNotesBeforeSql, [input.cutoff, input.batch.initial])).rowCount ?? 0;
      longestStatementMs = Math.max(longestStatementMs, performance.now() - started);
      statements += 1;
      deleted += count;
      if (count < input.batch.initial) {
        break;
      }
    }
  } finally {
    await client.end();
  }
  return { deleted, statements, longestStatementMs, longestStatement: `delete batch of ${input.batch.initial}`, partitionsDropped: 0, failure: null };
}
