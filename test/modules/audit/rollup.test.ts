import test, { type ExecutionContext } from 'ava';
import {
  createAuditQueries,
  detachAuditPartition,
  dropAuditPartition,
  foldAuditRollup,
  purgeAuditEventBatch,
  recordAuditEvent,
  subtractAuditPartitionFromRollup,
} from '../../../src/modules/audit/index.ts';
import { rollupPeriods } from '../../../src/modules/audit/rollup.ts';
import { purgeAuditEvents } from '../../../src/modules/audit/tasks/purgeAuditEvents.ts';
import { withTransaction } from '../../../src/platform/db/transaction.ts';
import { type TestDatabase, createTestDatabase } from '../../support/database.ts';

let db: TestDatabase;

test.before(async () => {
  db = await createTestDatabase();
});

test.after.always(async () => {
  await db?.drop();
});

const HOUR = 3_600_000;
const GROUPINGS = ['action', 'outcome', 'actor_kind', 'resource_type', 'day'] as const;
const startOfMonth = (offset: number) => {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + offset, 1));
};

// The count over the table that the statistics must equal, by the same keys.
async function countOverTable(from: Date, to: Date, groupBy: (typeof GROUPINGS)[number], extra = '') {
  const key = groupBy === 'day' ? `to_char(occurred_at at time zone 'utc', 'YYYY-MM-DD')` : groupBy;
  const rows = (
    await db.pool.query<{ key: string; count: string }>(
      `select ${key} as key, count(*) as count from audit_events where occurred_at >= $1 and occurred_at < $2 ${extra} group by 1`,
      [from, to],
    )
  ).rows;
  return Object.fromEntries(rows.map((row) => [row.key, Number(row.count)]));
}

// Windows with ragged edges (minutes past the hour), one within a single hour, and one aligned;
// then, by UTC day (D is today's midnight), partial days read whole less their hours outside (more
// than half inside) or by their hours inside, at either end and within a single day.
const windows = (): Array<[Date, Date]> => {
  const now = Date.now();
  const hour = Math.floor(now / HOUR) * HOUR;
  const D = Math.floor(now / (24 * HOUR)) * 24 * HOUR;
  const at = (days: number, hours: number, minutes: number) => new Date(D + (days * 24 + hours) * HOUR + minutes * 60_000);
  return [
    [new Date(now - 80 * 24 * HOUR - 17 * 60_000), new Date(now + 60_000)],
    [new Date(hour - 5 * HOUR + 7 * 60_000), new Date(hour - 2 * HOUR + 41 * 60_000)],
    [new Date(hour - 3 * HOUR + 10 * 60_000), new Date(hour - 3 * HOUR + 50 * 60_000)],
    [new Date(hour - 30 * 24 * HOUR), new Date(hour)],
    [at(-5, 2, 10), at(-1, 20, 5)],
    [at(-5, 20, 10), at(-1, 3, 5)],
    [at(-2, 1, 30), at(-2, 22, 0)],
    [at(-2, 8, 30), at(-2, 13, 0)],
    [at(-3, 13, 0), at(-2, 12, 59)],
  ];
};

async function assertStatsMatchTable(t: ExecutionContext) {
  const queries = createAuditQueries(db.pool);
  for (const [from, to] of windows()) {
    for (const groupBy of GROUPINGS) {
      const stats = await queries.stats({ from, to }, groupBy);
      const expected = await countOverTable(from, to, groupBy);
      const shown = Object.fromEntries(stats.groups.filter((group) => group.count > 0).map((group) => [group.key, group.count]));
      t.deepEqual(shown, expected, `${groupBy} over ${from.toISOString()}..${to.toISOString()}`);
      t.is(
        stats.total,
        Object.values(expected).reduce((sum, count) => sum + count, 0),
      );
      t.is(stats.other, 0);
    }
    const filtered = await queries.stats({ from, to, actionPrefix: 'bulk.', outcome: 'failure' }, 'actor_kind');
    const expected = await countOverTable(from, to, 'actor_kind', `and starts_with(action, 'bulk.') and outcome = 'failure'`);
    t.deepEqual(Object.fromEntries(filtered.groups.map((group) => [group.key, group.count])), expected);
  }
}

test.serial('the statistics equal a count over the table after the service records events, before and after a fold', async (t) => {
  const now = Date.now();
  const offsets = [0, 1, 2.5, 3.2, 3.9, 26, 24 * 20, 24 * 45];
  for (const [index, hours] of offsets.entries()) {
    await recordAuditEvent(db.pool, {
      occurredAt: new Date(now - hours * HOUR - index * 60_000),
      actor: { kind: index % 2 ? 'account' : 'service', id: `actor-${index}` },
      action: index % 3 ? 'settings.value.changed' : 'auth.sign_in.succeeded',
      resource: { type: index % 2 ? 'setting' : 'account', id: String(index) },
      outcome: index % 4 ? 'success' : 'denied',
    });
  }
  await assertStatsMatchTable(t);
  t.true((await foldAuditRollup(db.pool)) > 0);
  t.is(Number((await db.pool.query('select count(*) from audit_event_rollup_deltas')).rows[0].count), 0);
  await assertStatsMatchTable(t);
});

test.serial('events written by bulk SQL are counted when they commit, without waiting for a fold', async (t) => {
  await db.pool.query(
    `insert into audit_events (occurred_at, actor_kind, action, resource_type, outcome)
     select now() - interval '1 minute' * (n * 37 % (60 * 24 * 60)),
            (array['account', 'service', 'system', 'anonymous'])[1 + n % 4],
            'bulk.action_' || (n % 7), 'type_' || (n % 5),
            (array['success', 'failure', 'denied'])[1 + n % 3]
     from generate_series(1, 3000) as n`,
  );
  await assertStatsMatchTable(t);
  await foldAuditRollup(db.pool);
  await assertStatsMatchTable(t);
});

test.serial('retention deletes, partition drops and moves out of the default partition keep the rollup in step', async (t) => {
  // Two months back, beyond the partitions the migration made: these land in the default partition.
  const old = startOfMonth(-2);
  await db.pool.query(
    `insert into audit_events (occurred_at, actor_kind, action, outcome)
     select $1::timestamptz + interval '1 hour' * n, 'system', 'old.event', 'success' from generate_series(0, 99) as n`,
    [old],
  );
  // Creating that month's partition moves them out of the default: a delete and an insert.
  await db.pool.query('select ensure_audit_event_partitions($1, $1)', [old]);
  const oldPartition = `audit_events_p${old.toISOString().slice(0, 7).replace('-', '')}`;
  t.true(Number((await db.pool.query(`select count(*) from ${oldPartition}`)).rows[0].count) >= 100);
  t.is(
    Number(
      (await db.pool.query(`select count(*) from audit_events_default where occurred_at >= $1 and occurred_at < $2`, [old, startOfMonth(-1)])).rows[0].count,
    ),
    0,
  );
  await assertStatsMatchTable(t);

  // Retention's row deletes, through the purge, some folded before and some after.
  await foldAuditRollup(db.pool);
  await withTransaction(db.pool, (tx) => purgeAuditEventBatch(tx, new Date(Date.now() - 50 * 24 * HOUR), 500));
  await assertStatsMatchTable(t);

  // Retention's partition drop: detached, subtracted and dropped.
  await withTransaction(db.pool, async (tx) => {
    await detachAuditPartition(tx, oldPartition);
    await subtractAuditPartitionFromRollup(tx, oldPartition);
  });
  await dropAuditPartition(db.pool, oldPartition);
  await assertStatsMatchTable(t);
  await foldAuditRollup(db.pool);
  await assertStatsMatchTable(t);
  const rollupTotal = Number((await db.pool.query('select coalesce(sum(count), 0) as total from audit_event_rollup')).rows[0].total);
  t.is(rollupTotal, Number((await db.pool.query('select count(*) from audit_events')).rows[0].count));
  const dailyTotal = Number((await db.pool.query('select coalesce(sum(count), 0) as total from audit_event_rollup_daily')).rows[0].total);
  t.is(dailyTotal, rollupTotal);
  t.is(Number((await db.pool.query('select count(*) from audit_event_rollup where count = 0')).rows[0].count), 0);
  t.is(Number((await db.pool.query('select count(*) from audit_event_rollup_daily where count = 0')).rows[0].count), 0);
});

test.serial('a filter the rollup does not hold is counted over the table', async (t) => {
  const [from, to] = windows()[0]!;
  const stats = await createAuditQueries(db.pool).stats({ from, to, actorId: 'actor-1' }, 'action');
  t.deepEqual(Object.fromEntries(stats.groups.map((group) => [group.key, group.count])), await countOverTable(from, to, 'action', `and actor_id = 'actor-1'`));
});

test.serial('the retention purge itself subtracts a month it detaches: the statistics still equal the table', async (t) => {
  const old = startOfMonth(-3);
  await db.pool.query('select ensure_audit_event_partitions($1, $1)', [old]);
  await db.pool.query(
    `insert into audit_events (occurred_at, actor_kind, action, outcome)
     select $1::timestamptz + interval '1 hour' * n, 'system', 'older.event', 'success' from generate_series(0, 49) as n`,
    [old],
  );
  await foldAuditRollup(db.pool);
  const result = await purgeAuditEvents({
    connectionString: db.url,
    cutoff: startOfMonth(-2).toISOString(),
    batch: { initial: 1_000, min: 100, max: 10_000, targetMs: 100 },
    ledger: { kind: 'audit_events' },
  });
  t.true(result.partitionsDropped >= 1);
  await assertStatsMatchTable(t);
  await foldAuditRollup(db.pool);
  await assertStatsMatchTable(t);
  const rollupTotal = Number((await db.pool.query('select coalesce(sum(count), 0) as total from audit_event_rollup')).rows[0].total);
  t.is(rollupTotal, Number((await db.pool.query('select count(*) from audit_events')).rows[0].count));
});

test('a partial day more than half inside the window is read whole from the daily rollup, less its hours outside', (t) => {
  // [from, to) -> [first, end) whole hours, [dayFrom, dayTo) days, as ISO minutes.
  const cases: Array<[string, string, [string, string, string, string] | null]> = [
    ['2026-03-01T02:10', '2026-03-05T20:05', ['2026-03-01T03:00', '2026-03-05T20:00', '2026-03-01T00:00', '2026-03-06T00:00']],
    ['2026-03-01T20:10', '2026-03-05T03:05', ['2026-03-01T21:00', '2026-03-05T03:00', '2026-03-02T00:00', '2026-03-05T00:00']],
    ['2026-03-01T01:30', '2026-03-01T22:00', ['2026-03-01T02:00', '2026-03-01T22:00', '2026-03-01T00:00', '2026-03-02T00:00']],
    ['2026-03-01T08:30', '2026-03-01T13:00', ['2026-03-01T09:00', '2026-03-01T13:00', '2026-03-01T09:00', '2026-03-01T09:00']],
    ['2026-03-01T08:10', '2026-03-01T08:50', null],
  ];
  for (const [from, to, expected] of cases) {
    const found = rollupPeriods(new Date(`${from}:00Z`), new Date(`${to}:00Z`));
    const minutes = found && [found.first, found.end, found.dayFrom, found.dayTo].map((date) => date.toISOString().slice(0, 16));
    t.deepEqual(minutes, expected, `${from}..${to}`);
  }
});
