import test from 'ava';
import pg from 'pg';
import { purgeAuditEvents } from '../../../src/modules/audit/tasks/purgeAuditEvents.ts';
import { purgeSettingsHistory } from '../../../src/modules/settings/tasks/purgeSettingsHistory.ts';
import { type BatchBounds, nextBatchSize } from '../../../src/platform/db/batchedDelete.ts';
import { type TestDatabase, createTestDatabase } from '../../support/database.ts';

let db: TestDatabase;
const small: BatchBounds = { initial: 2, min: 1, max: 4, targetMs: 100 };

test.before(async () => {
  db = await createTestDatabase();
});

test.after.always(async () => {
  await db?.drop();
});

const seed = (rows: Array<[string, string]>) =>
  db.pool.query(
    `insert into audit_events (occurred_at, actor_kind, action, outcome, resource_id)
     select at, 'system', 'test.purge', 'success', marker from unnest($1::timestamptz[], $2::text[]) as seeded(at, marker)`,
    [rows.map(([at]) => at), rows.map(([, marker]) => marker)],
  );
const remaining = async () =>
  (await db.pool.query<{ marker: string }>(`select resource_id as marker from audit_events where action = 'test.purge' order by occurred_at`)).rows.map(
    (r) => r.marker,
  );
const ledger = async (kind: string) =>
  (
    await db.pool.query<{ rows: number; partitions: number; runs: string[] }>(
      `select coalesce(sum(rows), 0)::int as rows, coalesce(sum(partitions_dropped), 0)::int as partitions,
              coalesce(array_agg(distinct run_id::text), '{}') as runs
       from purge_ledger where kind = $1`,
      [kind],
    )
  ).rows[0]!;
const exists = async (table: string) => (await db.pool.query<{ found: boolean }>(`select to_regclass($1) is not null as found`, [table])).rows[0]!.found;

test.serial('audit events: whole months before the cutoff are dropped with their rows counted, the rest deleted in batches', async (t) => {
  await db.pool.query(`select ensure_audit_event_partitions('2025-01-01', '2025-03-31')`);
  await seed([
    ['1999-01-01T00:00:00Z', 'default-expired'],
    ['2025-01-03T00:00:00Z', 'january'],
    ['2025-01-20T00:00:00Z', 'january'],
    ['2025-01-31T23:59:59Z', 'january'],
    ['2025-02-01T00:00:00Z', 'february'],
    ['2025-02-14T00:00:00Z', 'february'],
    ['2025-03-02T00:00:00Z', 'march-expired'],
    ['2025-03-14T23:59:59Z', 'march-expired'],
    ['2025-03-15T00:00:00Z', 'march-kept'],
    ['2025-03-30T00:00:00Z', 'march-kept'],
    ['2090-01-01T00:00:00Z', 'default-kept'],
  ]);
  const result = await purgeAuditEvents({
    connectionString: db.url,
    cutoff: '2025-03-15T00:00:00Z',
    batch: small,
    ledger: { kind: 'months_and_batches', runId: '7' },
  });
  t.like(result, { deleted: 8, partitionsDropped: 2, failure: null });
  // Every batch and month left its count in the ledger, committed with it.
  t.deepEqual(await ledger('months_and_batches'), { rows: 8, partitions: 2, runs: ['7'] });
  // Two partitions (count, then drop with its commit) and at least two batches of at most four.
  t.true(result.statements >= 6);
  t.true(result.longestStatementMs > 0);
  t.deepEqual(await remaining(), ['march-kept', 'march-kept', 'default-kept']);
  t.false(await exists('audit_events_p202501'));
  t.false(await exists('audit_events_p202502'));
  t.true(await exists('audit_events_p202503'));
});

test.serial('a partition whose lock is not granted in time is kept and emptied by the batches instead', async (t) => {
  await db.pool.query(`select ensure_audit_event_partitions('2024-06-01', '2024-06-30')`);
  await seed([
    ['2024-06-05T00:00:00Z', 'june'],
    ['2024-06-25T00:00:00Z', 'june'],
  ]);
  const reader = new pg.Client({ connectionString: db.url });
  await reader.connect();
  try {
    // An open read of the month holds a lock the drop must wait for.
    await reader.query('begin');
    await reader.query('select count(*) from audit_events_p202406');
    const result = await purgeAuditEvents({ connectionString: db.url, cutoff: '2024-12-01T00:00:00Z', batch: small, ledger: { kind: 'audit_events' } });
    t.like(result, { deleted: 2, partitionsDropped: 0, failure: null });
  } finally {
    await reader.query('rollback');
    await reader.end();
  }
  t.true(await exists('audit_events_p202406'));
  t.is((await db.pool.query('select 1 from audit_events_p202406')).rowCount, 0);
  // Empty, it goes on the next run.
  t.like(await purgeAuditEvents({ connectionString: db.url, cutoff: '2024-12-01T00:00:00Z', batch: small, ledger: { kind: 'audit_events' } }), {
    deleted: 0,
    partitionsDropped: 1,
  });
  t.false(await exists('audit_events_p202406'));
});

test('a month an earlier purge detached and did not drop is counted and dropped by the next one', async (t) => {
  await db.pool.query(`select ensure_audit_event_partitions('2023-05-01', '2023-05-31')`);
  await seed([
    ['2023-05-02T00:00:00Z', 'may-detached'],
    ['2023-05-30T00:00:00Z', 'may-detached'],
  ]);
  // Where an interrupted purge leaves a month: out of audit_events, its files still there.
  await db.pool.query('alter table audit_events detach partition audit_events_p202305');
  t.false((await remaining()).includes('may-detached'));
  const result = await purgeAuditEvents({ connectionString: db.url, cutoff: '2023-07-01T00:00:00Z', batch: small, ledger: { kind: 'audit_events' } });
  t.like(result, { deleted: 2, partitionsDropped: 1, failure: null });
  t.false(await exists('audit_events_p202305'));
});

test('a purge that cannot reach the database reports the failure as a code and a message, with nothing deleted', async (t) => {
  const result = await purgeSettingsHistory({
    connectionString: 'postgres://nobody:secret@127.0.0.1:1/none',
    cutoff: new Date().toISOString(),
    batch: small,
    ledger: { kind: 'settings_history' },
  });
  t.like(result, { deleted: 0, statements: 0, partitionsDropped: 0 });
  t.is(result.failure?.code, 'task_failed');
  t.notRegex(result.failure!.message, /secret/);
});

test('batch sizes move toward the target duration, at most doubling or halving, within their bounds', (t) => {
  const bounds: BatchBounds = { initial: 5_000, min: 500, max: 50_000, targetMs: 100 };
  t.is(nextBatchSize(5_000, 10, bounds), 10_000);
  t.is(nextBatchSize(5_000, 80, bounds), 6_250);
  t.is(nextBatchSize(5_000, 200, bounds), 2_500);
  t.is(nextBatchSize(5_000, 1_000, bounds), 2_500);
  t.is(nextBatchSize(40_000, 10, bounds), 50_000);
  t.is(nextBatchSize(600, 1_000, bounds), 500);
  t.is(nextBatchSize(5_000, 0, bounds), 10_000);
});
