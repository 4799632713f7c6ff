import { moduleRouteDefiner } from 'backplane';
import { z } from 'zod';
import { digestOfNotes } from './digest.ts';
import { type NotesDeps, createNote, listNotes, readNote } from './service.ts';

const Note = z.object({ id: z.string(), title: z.string(), body: z.string(), created_by: z.string(), created_at: z.string() });
const NewNote = z.object({ title: z.string().min(1).max(200), body: z.string().max(10_000).default('') });
const NoteId = z.object({ id: z.string().regex(/^[1-9][0-9]{0,17}$/) });
const Page = z.object({ before: z.string().regex(/^[1-9][0-9]{0,17}$/).optional() });

/** The codes this module answers with, and their status. */
export const notesStatuses = { note_not_found: 404 } as const;

// The compiler checks each route's problem codes against notesStatuses and the platform's.
const defineRoute = moduleRouteDefiner<NotesDeps, typeof notesStatuses>();

export const notesRoutes = [
  defineRoute({
    method: 'POST',
    path: '/notes',
    permission: 'notes.write',
    tag: 'notes',
    summary: 'Write a note (audited)',
    body: NewNote,
    status: 201,
    responses: { 201: Note },
    handler: ({ body, caller, deps }) => createNote(deps, caller, body),
  }),
  defineRoute({
    method: 'GET',
    path: '/notes',
    permission: 'notes.read',
    tag: 'notes',
    summary: 'Notes, newest first, notes.page_size at a time',
    query: Page,
    responses: { 200: z.object({ notes: z.array(Note) }) },
    handler: async ({ query, deps }) => ({ notes: await listNotes(deps, query.before) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/notes/digest',
    permission: 'notes.read',
    tag: 'notes',
    summary: 'A SHA-256 digest of the notes, oldest first (at most 10,000), computed on a worker thread',
    responses: { 200: z.object({ notes: z.number().int(), sha256: z.string() }) },
    handler: ({ deps }) => digestOfNotes(deps),
  }),
  defineRoute({
    method: 'GET',
    path: '/notes/{id}',
    permission: 'notes.read',
    tag: 'notes',
    summary: 'One note',
    params: NoteId,
    responses: { 200: Note },
    problems: ['note_not_found'],
    handler: ({ params, deps }) => readNote(deps, params.id),
  }),
];
