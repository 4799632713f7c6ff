import test from 'ava';
import { registerInstance, selectInstances } from '../../../src/modules/releases/store.ts';
import { type TestDatabase, createTestDatabase } from '../../support/database.ts';

let db: TestDatabase;

test.before(async () => {
  db = await createTestDatabase();
});

test.after.always(async () => {
  await db?.drop();
});

test('instances are listed newest first by number, past ten as well', async (t) => {
  for (let i = 1; i <= 12; i += 1) {
    await registerInstance(db.pool, {
      instanceId: `instance-${i}`,
      version: '0.6.0',
      commit: undefined,
      buildTime: undefined,
      modified: false,
      runtimeVersion: process.version,
      host: 'test',
      pid: i,
    });
  }
  const rows = await selectInstances(db.pool, { staleAfterSeconds: 45, afterId: undefined, running: undefined, limit: 5 });
  t.deepEqual(
    rows.map((row) => row.pid),
    [12, 11, 10, 9, 8],
  );
  const next = await selectInstances(db.pool, { staleAfterSeconds: 45, afterId: rows.at(-1)!.id, running: undefined, limit: 20 });
  t.deepEqual(
    next.map((row) => row.pid),
    [7, 6, 5, 4, 3, 2, 1],
  );
});
