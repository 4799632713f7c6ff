import test from 'ava';
import { type TestDatabase, createTestDatabase } from '../../support/database.ts';
import { getJson } from '../../support/http.ts';
import { startTestInstance } from '../../support/instance.ts';
import { accountWithToken, bearer } from '../../support/tokens.ts';
import { notesApplication } from '../../app/fixtures/notesApplication.ts';

// An application's module declares notes.read; no role was made for it.
let db: TestDatabase;
let instance: Awaited<ReturnType<typeof startTestInstance>>;
test.before(async () => {
  db = await createTestDatabase();
  instance = await startTestInstance(db.url, {}, { application: notesApplication });
});
test.after.always(async () => {
  await instance?.drain();
  await db?.drop();
});

test("platform_admin holds the permissions of the application's modules, with no role made for them", async (t) => {
  const admin = await accountWithToken(db.pool, { roles: ['platform_admin'] });
  t.is((await getJson(`${instance.url}/notes`, bearer(admin.token))).status, 200);
  const roles = await getJson<{ roles: Array<{ name: string; permissions: string[] }> }>(`${instance.url}/ops/roles`, bearer(admin.token));
  t.deepEqual(roles.body.roles.find((role) => role.name === 'platform_admin')?.permissions, ['*']);
});

test("ops_viewer keeps only the ops reads: an application's read permission is not among them", async (t) => {
  const viewer = await accountWithToken(db.pool, { roles: ['ops_viewer'] });
  t.is((await getJson(`${instance.url}/notes`, bearer(viewer.token))).status, 403);
  t.is((await getJson(`${instance.url}/ops/jobs/definitions`, bearer(viewer.token))).status, 200);
});

test("what platform_admin holds, it may grant: a custom role with the application's permission", async (t) => {
  const admin = await accountWithToken(db.pool, { roles: ['platform_admin'] });
  const put = await fetch(`${instance.url}/ops/roles/note_readers`, {
    method: 'PUT',
    headers: { ...bearer(admin.token), 'content-type': 'application/json' },
    body: JSON.stringify({ permissions: ['notes.read'], reason: 'the notes team' }),
  });
  t.is(put.status, 201, await put.clone().text());
});
