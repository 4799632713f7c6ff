import test from 'ava';
import { CLI_ACTOR, purgeAuditEventBatch, recordAuditEvent } from '../../../src/modules/audit/index.ts';
import { withTransaction } from '../../../src/platform/db/transaction.ts';
import { type TestDatabase, createTestDatabase } from '../../support/database.ts';

let db: TestDatabase;

test.before(async () => {
  db = await createTestDatabase();
});

test.after.always(async () => {
  await db?.drop();
});

const row = async (id: string) => (await db.pool.query(`select *, host(client_ip) as ip from audit_events where id = $1`, [id])).rows[0];

test('an event is stored with its actor, resource, outcome, request, client and redacted metadata', async (t) => {
  const id = await recordAuditEvent(db.pool, {
    actor: { kind: 'account', id: 'a1', label: 'ops@example.com' },
    action: 'settings.value.changed',
    resource: { type: 'setting', id: 'audit.retention' },
    outcome: 'success',
    requestId: 'req-1',
    clientAddress: '203.0.113.9',
    userAgent: 'curl/8',
    metadata: { reason: 'keep longer', nested: { secret: 's' } },
  });
  t.like(await row(id), {
    actor_kind: 'account',
    actor_id: 'a1',
    actor_label: 'ops@example.com',
    action: 'settings.value.changed',
    resource_type: 'setting',
    resource_id: 'audit.retention',
    outcome: 'success',
    request_id: 'req-1',
    ip: '203.0.113.9',
    user_agent: 'curl/8',
    metadata: { reason: 'keep longer', nested: { secret: '[REDACTED]' } },
  });
});

test('oversized or unencodable metadata is replaced by a marker and the event is still stored', async (t) => {
  const large = await recordAuditEvent(db.pool, { actor: CLI_ACTOR, action: 'test.large', outcome: 'success', metadata: { blob: 'x'.repeat(20_000) } });
  t.is((await row(large)).metadata.metadata_dropped, 'too_large');
  const weird = await recordAuditEvent(db.pool, { actor: CLI_ACTOR, action: 'test.weird', outcome: 'failure', metadata: { n: 1n } });
  t.deepEqual((await row(weird)).metadata, { metadata_dropped: 'not_json' });
});

test('client addresses that are not IPs are stored as null; IPv6 and zones are handled; long texts are cut', async (t) => {
  // One normalisation for every stored address (clientAddress.ts): an IPv4-mapped IPv6 is the IPv4 it maps, as limits and logs see it.
  for (const [given, stored] of [
    ['not an ip', null],
    ['', null],
    ['::1', '::1'],
    ['fe80::1%eth0', 'fe80::1'],
    ['::ffff:10.0.0.1', '10.0.0.1'],
  ] as const) {
    const id = await recordAuditEvent(db.pool, { actor: CLI_ACTOR, action: 'test.ip', outcome: 'success', clientAddress: given });
    t.is((await row(id)).ip, stored, given);
  }
  const id = await recordAuditEvent(db.pool, {
    actor: { kind: 'anonymous', id: 'i'.repeat(500), label: 'l\u0000abel' },
    action: 'test.long',
    outcome: 'denied',
    userAgent: 'u'.repeat(2_000),
    requestId: 'r'.repeat(300),
  });
  const stored = await row(id);
  t.is(stored.actor_id.length, 200);
  t.is(stored.actor_label, 'label');
  t.is(stored.user_agent.length, 512);
  t.is(stored.request_id.length, 128);
});

test('a malformed action, outcome or actor kind is refused before reaching the table', async (t) => {
  await t.throwsAsync(recordAuditEvent(db.pool, { actor: CLI_ACTOR, action: 'nodots', outcome: 'success' }));
  await t.throwsAsync(recordAuditEvent(db.pool, { actor: CLI_ACTOR, action: 'Settings.Changed', outcome: 'success' }));
  await t.throwsAsync(recordAuditEvent(db.pool, { actor: CLI_ACTOR, action: 'a.b', outcome: 'maybe' as 'success' }));
  await t.throwsAsync(recordAuditEvent(db.pool, { actor: { kind: 'robot' as 'system' }, action: 'a.b', outcome: 'success' }));
});

test('an event recorded in a transaction that rolls back leaves nothing', async (t) => {
  await t.throwsAsync(
    withTransaction(db.pool, async (tx) => {
      await recordAuditEvent(tx, { actor: CLI_ACTOR, action: 'test.rolled_back', outcome: 'success' });
      throw new Error('the change failed');
    }),
  );
  t.is((await db.pool.query(`select 1 from audit_events where action = 'test.rolled_back'`)).rowCount, 0);
});

test.serial('the table is append-only: UPDATE, DELETE and TRUNCATE are refused; only the retention purge deletes', async (t) => {
  const id = await recordAuditEvent(db.pool, { actor: CLI_ACTOR, action: 'test.kept', outcome: 'success', occurredAt: new Date('2020-01-01T00:00:00Z') });
  await t.throwsAsync(db.pool.query(`update audit_events set outcome = 'failure' where id = $1`, [id]), { message: /append-only/ });
  await t.throwsAsync(db.pool.query(`delete from audit_events where id = $1`, [id]), { message: /append-only/ });
  await t.throwsAsync(db.pool.query(`truncate audit_events`), { message: /append-only/ });
  t.truthy(await row(id));

  const recent = await recordAuditEvent(db.pool, { actor: CLI_ACTOR, action: 'test.recent', outcome: 'success' });
  const deleted = await withTransaction(db.pool, (tx) => purgeAuditEventBatch(tx, new Date('2021-01-01T00:00:00Z'), 1_000));
  t.is(deleted, 1);
  t.falsy(await row(id));
  t.truthy(await row(recent));
  // The purge's permission ends with its transaction.
  await t.throwsAsync(db.pool.query(`delete from audit_events where id = $1`, [recent]), { message: /append-only/ });
});
