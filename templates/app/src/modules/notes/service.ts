import { type Caller, type Database, type RecordAudit, type RunTask, type SettingsReader, AppError, withTransaction } from 'backplane';
import type { NotesSetting } from './settings.ts';
import { type Note, insertNote, selectNote, selectNotes } from './store.ts';

/** What the notes' routes are given: the database, the audit trail, the notes' settings and the worker threads. */
export interface NotesDeps {
  database: Database;
  recordAudit: RecordAudit;
  settings: SettingsReader<NotesSetting>;
  runTask: RunTask;
}

/** Writes a note and its audit event in one transaction: both are kept, or neither. */
export function createNote(deps: NotesDeps, caller: Caller, input: { title: string; body: string }): Promise<Note> {
  return withTransaction(deps.database, async (tx) => {
    const note = await insertNote(tx, { title: input.title, body: input.body, createdBy: caller.actor.label });
    await deps.recordAudit(tx, {
      actor: caller.actor,
      action: 'notes.note.created',
      resource: { type: 'note', id: note.id },
      outcome: 'success',
      requestId: caller.requestId,
      clientAddress: caller.clientAddress,
      userAgent: caller.userAgent,
      metadata: { title: note.title },
    });
    return note;
  });
}

/** A page of notes, newest first, notes.page_size long. */
export const listNotes = (deps: NotesDeps, before: string | undefined) => selectNotes(deps.database, { before, limit: deps.settings.integer('notes.page_size') });

/** One note, or 404 note_not_found. */
export async function readNote(deps: NotesDeps, id: string): Promise<Note> {
  const note = await selectNote(deps.database, id);
  if (!note) {
    throw new AppError('note_not_found', `no note ${id}`);
  }
  return note;
}
