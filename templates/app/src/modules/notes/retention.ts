import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AgingTarget, QueryRunner } from 'backplane';

// How far notes are past notes.retention, on the database clock: $1 is the retention in seconds.
const notesAgeSql = `
select now() - make_interval(secs => $1) as cutoff,
       (select min(created_at) from notes) as oldest,
       (select count(*) from notes where created_at < now() - make_interval(secs => $1))::int as past_cutoff`;

async function notesAge(db: QueryRunner, seconds: number) {
  const row = (await db.query<{ cutoff: Date; oldest: Date | null; past_cutoff: number }>(notesAgeSql, [seconds])).rows[0]!;
  return { cutoff: row.cutoff, oldest: row.oldest, pastCutoff: row.past_cutoff, pastCutoffEstimated: false };
}

/** Notes age by created_at under notes.retention; Backplane's retention job purges them on a worker thread. */
export const notesRetention: AgingTarget<'notes.retention'> = {
  kind: 'notes',
  setting: 'notes.retention',
  age: notesAge,
  // The purge runs on a worker thread, which loads it by file: .ts from source, .js once built.
  task: { name: 'retention.notes', file: new URL(`./tasks/purgeNotes${extname(fileURLToPath(import.meta.url))}`, import.meta.url).href, exportName: 'purgeNotes' },
};
