import type { ModuleContext, Queryable, RecordAudit } from 'backplane';
import type pg from 'pg';
import { AppError } from 'backplane';
import { type Note, insertNote, selectNote, selectNotes } from './store.ts';

/** What the notes' routes are given: the pool, the audit trail, the settings they read and the worker threads. */
export interface NotesDeps {
  pool: pg.Pool;
  recordAudit: RecordAudit;
  pageSize(): number;
  runTask: ModuleContext['runTask'];
}

interface Caller {
  actor: { kind: 'account'; id: string; label: string };
  requestId: string;
  clientAddress: string;
  userAgent: string;
}

/** Writes a note and its audit event in one transaction: both are kept, or neither. */
export async function createNote(deps: NotesDeps, caller: Caller, input: { title: string; body: string }): Promise<Note> {
  const client = await deps.pool.connect();
  try {
    await client.query('begin');
    const note = await insertNote(client, { title: input.title, body: input.body, createdBy: caller.actor.label });
    await deps.recordAudit(client, {
      actor: caller.actor,
      action: 'notes.note.created',
      resource: { type: 'note', id: note.id },
      outcome: 'success',
      requestId: caller.requestId,
      clientAddress: caller.clientAddress,
      userAgent: caller.userAgent,
      metadata: { title: note.title },
    });
    await client.query('commit');
    return note;
  } catch (error) {
    await client.query('rollback');
    throw error;
  } finally {
    client.release();
  }
}

export const listNotes = (deps: NotesDeps, before: string | undefined) => selectNotes(deps.pool as Queryable, { before, limit: deps.pageSize() });

export async function readNote(deps: NotesDeps, id: string): Promise<Note> {
  const note = await selectNote(deps.pool as Queryable, id);
  if (!note) {
    throw new AppError('note_not_found', `no note ${id}`);
  }
  return note;
}
