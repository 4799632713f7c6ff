import test from 'ava';
import { CLI_ACTOR, ensureAuditEventPartitions, purgeAuditEventBatch, recordAuditEvent } from '../../../src/modules/audit/index.ts';
import { selectAuditEvents } from '../../../src/modules/audit/store.ts';
import { withTransaction } from '../../../src/platform/db/transaction.ts';
import { type TestDatabase, createTestDatabase } from '../../support/database.ts';

let db: TestDatabase;

test.before(async () => {
  db = await createTestDatabase();
});

test.after.always(async () => {
  await db?.drop();
});

const partitions = async () =>
  (
    await db.pool.query<{ name: string; bound: string }>(`
      select c.relname as name, pg_get_expr(c.relpartbound, c.oid) as bound
      from pg_inherits i join pg_class c on c.oid = i.inhrelid
      where i.inhparent = 'audit_events'::regclass order by c.relname`)
  ).rows;
const partitionOf = async (id: string) =>
  (await db.pool.query<{ partition: string }>(`select tableoid::regclass::text as partition from audit_events where id = $1`, [id])).rows[0]?.partition;
const monthName = (offset: number) => {
  const now = new Date();
  const month = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + offset, 1));
  return `audit_events_p${month.toISOString().slice(0, 7).replace('-', '')}`;
};
const event = (action: string, occurredAt: Date) => recordAuditEvent(db.pool, { actor: CLI_ACTOR, action, outcome: 'success', occurredAt });

test.serial('the migration made last month to three months ahead, plus the default; ensuring adds only what is missing', async (t) => {
  const names = (await partitions()).map((p) => p.name);
  t.true(names.includes('audit_events_default'));
  for (const offset of [-1, 0, 1, 2, 3]) {
    t.true(names.includes(monthName(offset)), monthName(offset));
  }
  const bound = (await partitions()).find((p) => p.name === monthName(1))!.bound;
  t.regex(bound, /^FOR VALUES FROM \('\d{4}-\d{2}-01 00:00:00\+00'\) TO \('\d{4}-\d{2}-01 00:00:00\+00'\)$/);

  t.is(await ensureAuditEventPartitions(db.pool, 5), 2);
  t.is(await ensureAuditEventPartitions(db.pool, 5), 0);
  t.true((await partitions()).some((p) => p.name === monthName(5)));
});

test.serial('events of a month without a partition land in the default one and move when the month gets its partition', async (t) => {
  const early = await event('test.far_ahead', new Date('2031-05-01T00:00:00Z'));
  const late = await event('test.far_ahead', new Date('2031-05-31T23:59:59.999Z'));
  const after = await event('test.far_ahead', new Date('2031-06-01T00:00:00Z'));
  t.is(await partitionOf(early), 'audit_events_default');

  const flag = await withTransaction(db.pool, async (tx) => {
    t.is((await tx.query<{ created: number }>(`select ensure_audit_event_partitions('2031-05-10', '2031-05-20') as created`)).rows[0]!.created, 1);
    return (await tx.query<{ flag: string }>(`select coalesce(current_setting('backplane.audit_purge', true), '') as flag`)).rows[0]!.flag;
  });
  // The purge permission it took to move them ends with the function, not with the transaction.
  t.is(flag, '');
  t.is(await partitionOf(early), 'audit_events_p203105');
  t.is(await partitionOf(late), 'audit_events_p203105');
  t.is(await partitionOf(after), 'audit_events_default');
  t.is((await db.pool.query(`select 1 from audit_events where action = 'test.far_ahead'`)).rowCount, 3);
});

test.serial('every partition stays append-only; only the purge deletes', async (t) => {
  const id = await event('test.kept', new Date());
  await event('test.kept', new Date('2050-01-01T00:00:00Z'));
  const month = monthName(0);
  for (const table of ['audit_events', month, 'audit_events_default']) {
    await t.throwsAsync(db.pool.query(`update ${table} set outcome = 'failure'`), { message: /append-only: UPDATE/ }, table);
    await t.throwsAsync(db.pool.query(`delete from ${table}`), { message: /append-only: DELETE/ }, table);
    await t.throwsAsync(db.pool.query(`truncate ${table}`), { message: /append-only: TRUNCATE/ }, table);
  }
  const created = await ensureAuditEventPartitions(db.pool, 7);
  t.true(created > 0);
  await t.throwsAsync(db.pool.query(`truncate ${monthName(7)}`), { message: /append-only: TRUNCATE/ });
  t.is(await partitionOf(id), month);
  t.true((await withTransaction(db.pool, (tx) => purgeAuditEventBatch(tx, new Date(Date.now() + 60_000), 1_000))) > 0);
  t.falsy(await partitionOf(id));
});

test.serial('ids stay unique across partitions; a lookup by id and newest-first pages by id work through the parent', async (t) => {
  const ids = [];
  for (const at of ['2031-05-15T00:00:00Z', '2040-01-01T00:00:00Z', new Date().toISOString(), '2031-05-16T00:00:00Z']) {
    ids.push(await event('test.paged', new Date(at)));
  }
  t.is(new Set(ids).size, 4);
  t.deepEqual(
    ids,
    [...ids].sort((a, b) => Number(a) - Number(b)),
  );
  const byId = await db.pool.query<{ action: string }>(`select action from audit_events where id = $1`, [ids[1]]);
  t.deepEqual(byId.rows, [{ action: 'test.paged' }]);
  const first = await selectAuditEvents(db.pool, { action: 'test.paged' }, undefined, 3);
  t.deepEqual(
    first.map((row) => row.id),
    [ids[3], ids[2], ids[1]],
  );
  const second = await selectAuditEvents(db.pool, { action: 'test.paged' }, first.at(-1)!.id, 3);
  t.deepEqual(
    second.map((row) => row.id),
    [ids[0]],
  );
});
