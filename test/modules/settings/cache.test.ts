import test from 'ava';
import pino from 'pino';
// Composing Backplane's application declares its modules' settings, which the cache serves.
import '../../../src/app/defaultApplication.ts';
import { createSettingsCache } from '../../../src/modules/settings/cache.ts';
import { createSettingsReader } from '../../../src/modules/settings/reader.ts';
import { createNotificationListener } from '../../../src/platform/db/listener.ts';
import { createPool } from '../../../src/platform/db/pool.ts';
import { type TestDatabase, createTestDatabase } from '../../support/database.ts';
import { waitFor } from '../../support/cluster.ts';

let db: TestDatabase;
const logger = pino({ level: 'silent' });

test.before(async () => {
  db = await createTestDatabase();
});

test.after.always(async () => {
  await db?.drop();
});

/** A change no instance is told about: triggers off, so no NOTIFY. */
async function silentWrite(name: string, value: unknown, version: number): Promise<void> {
  const client = await db.pool.connect();
  try {
    await client.query('begin');
    await client.query('set local session_replication_role = replica');
    await client.query(
      `insert into settings_values (name, value, version, updated_by_kind, updated_by_id, updated_by) values ($1, $2::jsonb, $3, 'system', 'test', 'test')
       on conflict (name) do update set value = excluded.value, version = excluded.version`,
      [name, JSON.stringify(value), version],
    );
    await client.query('commit');
  } finally {
    client.release();
  }
}

test.serial('the periodic resync picks up a change whose notification never came', async (t) => {
  const listener = createNotificationListener(db.url, logger);
  const cache = createSettingsCache(db.pool, listener, logger, { resyncMs: 200 });
  await cache.load();
  await waitFor(async () => (listener.connected ? true : undefined), 5_000, 'the listener');
  // Lets the reload that follows connecting finish first, so only the resync can see the write.
  await cache.reload();
  const settings = createSettingsReader(cache);
  t.is(settings.integer('auth.ip_requests_per_minute'), 60);
  await silentWrite('auth.ip_requests_per_minute', 120, 1);
  await waitFor(async () => (settings.integer('auth.ip_requests_per_minute') === 120 ? true : undefined), 3_000, 'the resync');
  t.is(settings.duration('auth.login_window'), 900);
  t.is(settings.boolean('maintenance.enabled'), false);
  t.is(settings.string('maintenance.message'), '');
  cache.close();
  await listener.close();
});

test.serial('while the database is unreachable the last known values are served', async (t) => {
  const pool = createPool({ connectionString: db.url, max: 1, applicationName: 'settings-cache-test', acquireTimeoutMs: 500 });
  const listener = createNotificationListener(db.url, logger);
  const cache = createSettingsCache(pool, listener, logger, { resyncMs: 60_000 });
  await silentWrite('maintenance.enabled', true, 1);
  await cache.load();
  const settings = createSettingsReader(cache);
  t.true(settings.boolean('maintenance.enabled'));

  await pool.end();
  await silentWrite('maintenance.enabled', false, 2);
  await cache.reload();
  await t.throwsAsync(cache.load());
  t.true(settings.boolean('maintenance.enabled'), 'the last known value, not the default');
  t.is(cache.get('maintenance.enabled')!.stored!.version, 1);
  cache.close();
  await listener.close();
});

test('a first load that fails refuses to start rather than serve defaults', async (t) => {
  const pool = createPool({ connectionString: db.url.replace(/\/[^/]+$/, '/no_such_database'), max: 1, applicationName: 'settings-cache-test' });
  const listener = createNotificationListener(db.url, logger);
  const cache = createSettingsCache(pool, listener, logger);
  await t.throwsAsync(cache.load());
  t.throws(() => createSettingsReader(cache).boolean('maintenance.enabled'));
  cache.close();
  await listener.close();
  await pool.end();
});
