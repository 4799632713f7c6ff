import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { accountWithToken, bearer, createTestDatabase, startTestInstance, startTestPostgres } from 'backplane/testing';
import { application } from '../../application.ts';

// A throw-away PostgreSQL with Backplane's migrations and the application's, and one instance of the application.
const postgres = await startTestPostgres({ application });
const db = await createTestDatabase();
let instance: Awaited<ReturnType<typeof startTestInstance>>;

before(async () => {
  instance = await startTestInstance(db.url, {}, { application });
});

after(async () => {
  await instance?.drain();
  await db.drop();
  await postgres.stop();
});

const send = async (method: string, path: string, token: string, body?: unknown) => {
  const response = await fetch(`${instance.url}${path}`, {
    method,
    headers: { ...bearer(token), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};

test('a writer creates a note, a reader lists and reads it', async () => {
  const writer = await accountWithToken(db.pool, { permissions: ['notes.write', 'notes.read'] });
  const created = await send('POST', '/notes', writer.token, { title: 'first', body: 'hello' });
  assert.equal(created.status, 201);
  const reader = await accountWithToken(db.pool, { permissions: ['notes.read'] });
  const listed = await send('GET', '/notes', reader.token);
  assert.equal(listed.status, 200);
  assert.ok((listed.body.notes as Array<{ id: string }>).some((note) => note.id === created.body.id));
  const read = await send('GET', `/notes/${String(created.body.id)}`, reader.token);
  assert.equal(read.body.title, 'first');
});

test('writing needs notes.write; an unknown note is 404 note_not_found', async () => {
  const reader = await accountWithToken(db.pool, { permissions: ['notes.read'] });
  assert.equal((await send('POST', '/notes', reader.token, { title: 'no' })).status, 403);
  const missing = await send('GET', '/notes/999999', reader.token);
  assert.equal(missing.status, 404);
  assert.equal(missing.body.code, 'note_not_found');
});

test('writing a note is audited in the same transaction', async () => {
  const writer = await accountWithToken(db.pool, { permissions: ['notes.write'] });
  const created = await send('POST', '/notes', writer.token, { title: 'audited' });
  const events = await db.pool.query(`select 1 from audit_events where action = 'notes.note.created' and resource_id = $1`, [created.body.id]);
  assert.equal(events.rowCount, 1);
});

test('the digest of the notes is computed on a worker thread, from the TypeScript task as written', async () => {
  const writer = await accountWithToken(db.pool, { permissions: ['notes.write', 'notes.read'] });
  const before = await send('GET', '/notes/digest', writer.token);
  assert.equal(before.status, 200);
  await send('POST', '/notes', writer.token, { title: 'digested' });
  const after = await send('GET', '/notes/digest', writer.token);
  assert.equal(after.body.notes, Number(before.body.notes) + 1);
  assert.match(String(after.body.sha256), /^[0-9a-f]{64}$/);
  assert.notEqual(after.body.sha256, before.body.sha256);
});
