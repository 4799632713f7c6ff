import test from 'ava';
import { auditEventsAging } from '../../../src/modules/audit/index.ts';
import { type TestDatabase, createTestDatabase } from '../../support/database.ts';

let db: TestDatabase;

test.before(async () => {
  db = await createTestDatabase();
  await db.pool.query(`select ensure_audit_event_partitions('2024-01-01', '2024-04-30')`);
  await db.pool.query(
    `insert into audit_events (occurred_at, actor_kind, action, outcome, resource_id)
     select at, 'system', 'test.aging', 'success', 'seeded' from unnest($1::timestamptz[]) as seeded(at)`,
    [
      [
        '1999-06-01T00:00:00Z',
        ...Array.from({ length: 5 }, (_, day) => `2024-01-${String(day + 10)}T00:00:00Z`),
        '2024-02-03T00:00:00Z',
        '2024-02-27T00:00:00Z',
        '2024-03-02T00:00:00Z',
        '2024-03-28T00:00:00Z',
      ],
    ],
  );
});

test.after.always(async () => {
  await db?.drop();
});

// A retention whose cutoff, on the database clock, falls on 2024-03-15: January and February are whole expired months.
const retentionToMidMarch = async () =>
  (await db.pool.query<{ seconds: number }>(`select extract(epoch from now() - timestamptz '2024-03-15 00:00:00+00')::float8 as seconds`)).rows[0]!.seconds;

test.serial('months the statistics have not seen are counted: the answer is exact and says so', async (t) => {
  const age = await auditEventsAging.age(db.pool, await retentionToMidMarch());
  // 1999 (default partition) + 5 in January + 2 in February + 1 before the cutoff in March.
  t.like(age, { pastCutoff: 9, pastCutoffEstimated: false });
  t.is(age.oldest?.toISOString(), '1999-06-01T00:00:00.000Z');
});

test.serial('whole expired months come from the catalogue once analysed, marked as estimated; the boundary month stays exact', async (t) => {
  await db.pool.query('analyze audit_events_p202401, audit_events_p202402, audit_events_p202403');
  const age = await auditEventsAging.age(db.pool, await retentionToMidMarch());
  // A small table is analysed whole, so the catalogue's count is the true one here.
  t.like(age, { pastCutoff: 9, pastCutoffEstimated: true });
  // Rows added to the boundary month since the analysis are counted at once.
  await db.pool.query(
    `insert into audit_events (occurred_at, actor_kind, action, outcome, resource_id) values ('2024-03-01T00:00:00Z', 'system', 'test.aging', 'success', 'late')`,
  );
  t.like(await auditEventsAging.age(db.pool, await retentionToMidMarch()), { pastCutoff: 10, pastCutoffEstimated: true });
});

test.serial('an empty whole month counts nothing and is not an estimate', async (t) => {
  await db.pool.query(`select ensure_audit_event_partitions('2023-06-01', '2023-06-30')`);
  const seconds = (await db.pool.query<{ seconds: number }>(`select extract(epoch from now() - timestamptz '2023-08-01 00:00:00+00')::float8 as seconds`))
    .rows[0]!.seconds;
  t.like(await auditEventsAging.age(db.pool, seconds), { pastCutoff: 1, pastCutoffEstimated: false });
});
