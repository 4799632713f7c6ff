import test from 'ava';
import { randomUUID } from 'node:crypto';
import { createKeyRing } from '../../../src/modules/auth/keyRing.ts';
import type { NotificationListener } from '../../../src/platform/db/listener.ts';
import type { Queryable } from '../../../src/platform/db/pool.ts';
import { createLogger } from '../../../src/platform/logging/logger.ts';
import { type TestDatabase, createTestDatabase } from '../../support/database.ts';
import { testBox } from '../../support/tokens.ts';

let db: TestDatabase;

test.before(async () => {
  db = await createTestDatabase();
});

test.after.always(async () => {
  await db?.drop();
});

/** No NOTIFY ever arrives: only the ring's own reloads reach the database. */
const silentListener: NotificationListener = {
  listen: () => undefined,
  onConnected: () => undefined,
  listening: async () => undefined,
  connected: true,
  close: async () => undefined,
};

test('a flood of made-up kids costs a bounded number of reloads, not a query each', async (t) => {
  let reads = 0;
  const counting: Queryable = {
    query: (text, values) => {
      if (/from auth_signing_keys\s+where retired_at is null or verifies_until/.test(text)) {
        reads += 1;
      }
      return db.pool.query(text, values);
    },
  };
  const ring = await createKeyRing({ db: counting, listener: silentListener, logger: createLogger('silent'), box: testBox, pem: undefined });
  try {
    for (let round = 0; round < 2; round += 1) {
      const found = await Promise.all(Array.from({ length: 50 }, () => ring.verificationKey(randomUUID())));
      t.true(found.every((key) => key === undefined));
    }
    t.true(reads <= 3, `${reads} reloads for 100 unknown kids`);
    t.truthy(await ring.verificationKey(ring.signingKey.kid));
    t.is(await ring.verificationKey(undefined), undefined);
  } finally {
    ring.close();
  }
});
