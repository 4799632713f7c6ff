import test from 'ava';
import pino from 'pino';
import { createNotificationListener } from '../../../src/platform/db/listener.ts';
import { type TestDatabase, createTestDatabase } from '../../support/database.ts';
import { waitFor } from '../../support/cluster.ts';

const logger = pino({ level: 'silent' });
let db: TestDatabase;

test.before(async () => {
  db = await createTestDatabase();
});
test.after.always(async () => {
  await db?.drop();
});

const listenerConnections = async () =>
  (
    await db.pool.query<{ n: number }>(
      "select count(*)::int as n from pg_stat_activity where datname = current_database() and application_name = 'backplane-listener'",
    )
  ).rows[0]!.n;

test.serial('closed while its connection is being made, the listener ends that connection: nothing holds the process', async (t) => {
  for (let i = 0; i < 5; i += 1) {
    const listener = createNotificationListener(db.url, logger);
    listener.listen('test_channel', () => undefined);
    // The connection is in flight: close() finds no client to end.
    await listener.close();
  }
  await waitFor(async () => ((await listenerConnections()) === 0 ? true : undefined), 10_000, 'every listener connection to end');
  t.is(await listenerConnections(), 0);
});

test.serial('a listener closed once connected ends its connection', async (t) => {
  const listener = createNotificationListener(db.url, logger);
  listener.listen('test_channel', () => undefined);
  await waitFor(async () => (listener.connected ? true : undefined), 10_000, 'the listener to connect');
  t.is(await listenerConnections(), 1);
  await listener.close();
  await waitFor(async () => ((await listenerConnections()) === 0 ? true : undefined), 10_000, 'its connection to end');
  t.pass();
});
