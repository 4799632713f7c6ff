import test from 'ava';
import { createAuditQueries } from '../../../src/modules/audit/index.ts';
import { type TestDatabase, createTestDatabase } from '../../support/database.ts';

let db: TestDatabase;

test.before(async () => {
  db = await createTestDatabase();
  // 300 events over the last 300 minutes, every 25th a rare action that failed; the first twelve
  // (ids of one and two digits) share one instant.
  await db.pool.query(
    `insert into audit_events (occurred_at, actor_kind, action, outcome)
     select date_trunc('second', now()) - interval '1 minute' * (n / 5 * 5) * (case when n < 12 then 0 else 1 end)
              - interval '1 second' * (case when n < 12 then 0 else n % 5 end),
            'system', case when n % 25 = 0 then 'rare.event' else 'common.event' end,
            case when n % 25 = 0 then 'failure' else 'success' end
     from generate_series(0, 299) as n`,
  );
});

test.after.always(async () => {
  await db?.drop();
});

// The whole answer, in the order the list promises: newest occurred_at first, then highest id.
const expected = async (where: string) =>
  (await db.pool.query<{ id: string }>(`select id::text from audit_events where ${where} order by occurred_at desc, audit_events.id desc`)).rows.map(
    (row) => row.id,
  );

async function walk(options: { filter: Parameters<ReturnType<typeof createAuditQueries>['list']>[0]; limit: number; scanRows: number }) {
  const queries = createAuditQueries(db.pool, { listScanRows: options.scanRows });
  const pages: Array<Awaited<ReturnType<typeof queries.list>> & { cursor: string | undefined }> = [];
  let cursor: string | undefined;
  for (let index = 0; index < 200; index += 1) {
    const page = await queries.list(options.filter, cursor, options.limit);
    pages.push({ ...page, cursor });
    cursor = page.nextCursor;
    if (!cursor) {
      break;
    }
  }
  return pages;
}

test('a sparse filter no index serves is answered in bounded scans whose cursors resume exactly where each stopped', async (t) => {
  const pages = await walk({ filter: { outcome: 'failure' }, limit: 50, scanRows: 40 });
  t.deepEqual(
    pages.flatMap((page) => page.events.map((event) => event.id)),
    await expected(`outcome = 'failure'`),
  );
  t.is(pages.at(-1)!.nextCursor, undefined);
  const stopped = pages.filter((page) => page.scanStoppedAt);
  t.true(stopped.length >= 6);
  const all = await expected('true');
  for (const page of stopped) {
    // The scan examined the 40 events after the page's cursor, and the next cursor names the 40th.
    const start = page.cursor ? all.indexOf(page.cursor.split('_')[1]!) + 1 : 0;
    t.is(page.nextCursor!.split('_')[1], all[start + 39]);
    t.true(page.events.length <= 2);
  }
});

test('a dense filter fills its pages before the bound, and pages through shared instants by id without gaps or repeats', async (t) => {
  const pages = await walk({ filter: {}, limit: 3, scanRows: 1000 });
  t.deepEqual(
    pages.flatMap((page) => page.events.map((event) => event.id)),
    await expected('true'),
  );
  t.true(pages.every((page) => page.scanStoppedAt === undefined));
});

test('an id-only cursor of the former format continues from its event; once the event is gone it is audit_cursor_expired', async (t) => {
  const all = await expected('true');
  const queries = createAuditQueries(db.pool);
  const page = await queries.list({}, all[9], 5);
  t.deepEqual(
    page.events.map((event) => event.id),
    all.slice(10, 15),
  );
  const error = await t.throwsAsync(queries.list({}, '999999999999', 5));
  t.is((error as Error & { code: string }).code, 'audit_cursor_expired');
});

test('a filter an index serves counts its bound in that index: a sparse action fills its page in one request', async (t) => {
  // 20 events of 300 in time order would hold one rare event; 20 of the action's index hold all twelve.
  const pages = await walk({ filter: { action: 'rare.event' }, limit: 50, scanRows: 20 });
  t.is(pages.length, 1);
  t.deepEqual(
    pages[0]!.events.map((event) => event.id),
    await expected(`action = 'rare.event'`),
  );
  t.is(pages[0]!.scanStoppedAt, undefined);
});

test('an indexed filter with a condition no row meets stops after the bound in its own index, and resumes there', async (t) => {
  const pages = await walk({ filter: { action: 'rare.event', outcome: 'success' }, limit: 50, scanRows: 5 });
  const rare = await expected(`action = 'rare.event'`);
  t.true(pages.every((page) => page.events.length === 0));
  // Twelve rare events, five examined per request: stops after the 5th and the 10th, then the end.
  t.deepEqual(
    pages.map((page) => page.nextCursor?.split('_')[1]),
    [rare[4], rare[9], undefined],
  );
});

test('a filter its index serves whole is read a page at a time, whatever the bound: every scanned event belongs to the page', async (t) => {
  for (const filter of [{}, { action: 'common.event' }]) {
    const pages = await walk({ filter, limit: 40, scanRows: 5 });
    t.deepEqual(
      pages.flatMap((page) => page.events.map((event) => event.id)),
      await expected(filter.action ? `action = 'common.event'` : 'true'),
    );
    t.true(pages.every((page) => page.scanStoppedAt === undefined && (page.events.length === 40 || !page.nextCursor)));
  }
});

test.serial('a cursor far from now resumes exactly: its time is read without rounding through float8', async (t) => {
  // 9999-12-31T23:59:59.999999Z and 0001-01-01T00:00:00.000001Z: past 2^53 microseconds from the epoch.
  const late = '253402300799999999';
  const early = '-62135596799999999';
  await db.pool.query(
    `insert into audit_events (occurred_at, actor_kind, action, outcome) values
       ('epoch'::timestamptz + ($1::bigint / 1000000) * interval '1 second' + ($1::bigint % 1000000) * interval '1 microsecond', 'system', 'far.event', 'success'),
       ('epoch'::timestamptz + ($2::bigint / 1000000) * interval '1 second' + ($2::bigint % 1000000) * interval '1 microsecond', 'system', 'far.event', 'success')`,
    [late, early],
  );
  const queries = createAuditQueries(db.pool);
  const pages = [];
  let cursor: string | undefined;
  do {
    const page = await queries.list({ action: 'far.event' }, cursor, 1);
    pages.push(page.events.map((event) => event.occurred_at.toISOString()));
    cursor = page.nextCursor;
  } while (cursor && pages.length < 5);
  t.deepEqual(pages, [['9999-12-31T23:59:59.999Z'], ['0001-01-01T00:00:00.000Z']]);
  t.true((await queries.list({ action: 'far.event' }, `${late}_0`, 5)).events.length === 1);
});
