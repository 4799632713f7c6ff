import type { QueryRunner } from 'backplane';

export interface Note {
  id: string;
  title: string;
  body: string;
  created_by: string;
  created_at: string;
}

interface NoteRow {
  id: string;
  title: string;
  body: string;
  created_by: string;
  created_at: Date;
}

const toNote = (row: NoteRow): Note => ({ ...row, created_at: row.created_at.toISOString() });

// One note, returned as stored so the answer shows the id and time the database gave it.
const insertNoteSql = `
insert into notes (title, body, created_by) values ($1, $2, $3)
returning id::text, title, body, created_by, created_at`;

export async function insertNote(db: QueryRunner, note: { title: string; body: string; createdBy: string }): Promise<Note> {
  return toNote((await db.query<NoteRow>(insertNoteSql, [note.title, note.body, note.createdBy])).rows[0]!);
}

// Newest first, the id breaking ties; a page ends before `before` (keyset pagination).
const selectNotesSql = `
select id::text, title, body, created_by, created_at from notes
where $1::bigint is null or id < $1
order by id desc
limit $2`;

export async function selectNotes(db: QueryRunner, page: { before: string | undefined; limit: number }): Promise<Note[]> {
  return (await db.query<NoteRow>(selectNotesSql, [page.before ?? null, page.limit])).rows.map(toNote);
}

// One note by id.
const selectNoteSql = `select id::text, title, body, created_by, created_at from notes where id = $1`;

export async function selectNote(db: QueryRunner, id: string): Promise<Note | undefined> {
  const row = (await db.query<NoteRow>(selectNoteSql, [id])).rows[0];
  return row && toNote(row);
}

// What the daily job logs: how many notes there are, and the oldest.
const countNotesSql = `select count(*)::int as count, min(created_at) as oldest from notes`;

export async function countNotes(db: QueryRunner): Promise<{ count: number; oldest: Date | null }> {
  return (await db.query<{ count: number; oldest: Date | null }>(countNotesSql)).rows[0]!;
}

// Retention: notes older than the setting go, in bounded batches (the oldest first).
const deleteOldNotesSql = `
delete from notes where id in (
  select id from notes where created_at < now() - make_interval(secs => $1) order by created_at limit $2
)`;

export async function deleteOldNotes(db: QueryRunner, seconds: number, batch: number): Promise<number> {
  return (await db.query(deleteOldNotesSql, [seconds, batch])).rowCount ?? 0;
}

// Oldest first, for the digest: its text only.
const selectNoteTextsSql = `
select id::text, title, body from notes order by id limit $1`;

export async function selectNoteTexts(db: QueryRunner, limit: number): Promise<Array<{ id: string; title: string; body: string }>> {
  return (await db.query<{ id: string; title: string; body: string }>(selectNoteTextsSql, [limit])).rows;
}
