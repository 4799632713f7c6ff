import { createHash } from 'node:crypto';

/** The notes as the digest task receives them: plain data, since it crosses to a worker thread. */
export interface DigestInput {
  notes: Array<{ id: string; title: string; body: string }>;
}

/**
 * A SHA-256 digest of the notes, oldest first: CPU work for a worker thread, so hashing many notes
 * never holds up the requests of the instance's event loop.
 */
export function digestNotes(input: DigestInput): { notes: number; sha256: string } {
  const hash = createHash('sha256');
  for (const note of input.notes) {
    // Lengths first, so moving text from one note or field to the next changes the digest.
    hash.update(`${note.id}:${note.title.length}:${note.body.length}\n${note.title}${note.body}`);
  }
  return { notes: input.notes.length, sha256: hash.digest('hex') };
}
