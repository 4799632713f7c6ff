import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { NotesDeps } from './service.ts';
import { selectNoteTexts } from './store.ts';
import type { digestNotes } from './tasks/digestNotes.ts';

/**
 * The digest task, run on Backplane's worker threads by file and export name: .ts from source
 * (`npm run backplane -- serve`, `npm test`), .js once built (`npm start`).
 */
const digestTask = {
  name: 'notes.digest',
  file: new URL(`./tasks/digestNotes${extname(fileURLToPath(import.meta.url))}`, import.meta.url).href,
  exportName: 'digestNotes',
};

/** The most notes one digest covers, so its input stays a bounded message to the thread. */
const DIGEST_LIMIT = 10_000;

/** A digest of the oldest notes, computed on a worker thread. */
export async function digestOfNotes(deps: NotesDeps): Promise<ReturnType<typeof digestNotes>> {
  const notes = await selectNoteTexts(deps.database, DIGEST_LIMIT);
  return deps.runTask<Parameters<typeof digestNotes>[0], ReturnType<typeof digestNotes>>(digestTask, { notes });
}
