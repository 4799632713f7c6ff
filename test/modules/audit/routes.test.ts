import test from 'ava';
import { CLI_ACTOR, recordAuditEvent } from '../../../src/modules/audit/index.ts';
import { useInstances } from '../../support/fixture.ts';
import { getJson } from '../../support/http.ts';
import { assertProblem } from '../../support/problems.ts';
import { accountWithToken, bearer } from '../../support/tokens.ts';

const app = useInstances(test, {
  accounts: { reader: { permissions: ['ops.audit.read'] } },
  async seed(db) {
    // 60 actions under test.group_NN, action NN having NN events, all an hour ago: 1 830 events.
    await db.pool.query(`
      insert into audit_events (occurred_at, actor_kind, actor_id, action, resource_type, resource_id, outcome)
      select now() - interval '1 hour', 'system', 'seed', 'test.group_' || lpad(g::text, 2, '0'), 'thing', g::text,
             case when n % 3 = 0 then 'failure' else 'success' end
      from generate_series(1, 60) g, generate_series(1, g) n`);
    // Three dated events for the day view.
    for (const day of ['2026-01-01T10:00:00Z', '2026-01-01T23:59:59Z', '2026-01-03T00:00:00Z']) {
      await recordAuditEvent(db.pool, { actor: CLI_ACTOR, action: 'dated.event', outcome: 'success', occurredAt: new Date(day) });
    }
  },
});

const audit = (query: string) => getJson(`${app.instance.url}/ops/audit${query}`, app.headers.reader);
const stats = (query: string) => getJson(`${app.instance.url}/ops/audit/stats${query}`, app.headers.reader);

test('the list is newest first and pages by cursor without gaps or repeats', async (t) => {
  const ids: number[] = [];
  let cursor: string | undefined;
  do {
    const page = await audit(`?action_prefix=test.group_0&limit=7${cursor ? `&cursor=${cursor}` : ''}`);
    t.is(page.status, 200);
    ids.push(...page.body.events.map((event: any) => Number(event.id)));
    cursor = page.body.next_cursor;
  } while (cursor);
  t.is(ids.length, 45);
  t.deepEqual(
    ids,
    [...ids].sort((a, b) => b - a),
  );
  t.is(new Set(ids).size, ids.length);
});

test('filters: action, prefix, actor, resource, outcome, time window', async (t) => {
  const exact = await audit('?action=test.group_05&limit=100');
  t.is(exact.body.events.length, 5);
  t.like(exact.body.events[0], { action: 'test.group_05', actor: { kind: 'system', id: 'seed' }, resource: { type: 'thing', id: '5' } });
  t.is((await audit('?action=test.group_05&outcome=failure')).body.events.length, 1);
  t.is((await audit('?resource_type=thing&resource_id=60&limit=100')).body.events.length, 60);
  t.is((await audit('?actor_kind=system&actor_id=cli&action_prefix=dated.')).body.events.length, 3);
  t.is((await audit('?actor_kind=account&action_prefix=test.')).body.events.length, 0);
  const window = await audit('?action=dated.event&from=2026-01-01T00:00:00Z&to=2026-01-02T00:00:00Z');
  t.deepEqual(
    window.body.events.map((e: any) => e.occurred_at),
    ['2026-01-01T23:59:59.000Z', '2026-01-01T10:00:00.000Z'],
  );
});

test('stats: the 50 largest groups, the rest in other, and the total of the window', async (t) => {
  const { status, body } = await stats('?group_by=action&action_prefix=test.');
  t.is(status, 200);
  t.is(body.group_by, 'action');
  t.is(body.groups.length, 50);
  t.deepEqual(body.groups[0], { key: 'test.group_60', count: 60 });
  t.deepEqual(body.groups.at(-1), { key: 'test.group_11', count: 11 });
  t.is(body.other, 55);
  t.is(body.total, 1830);
  t.is(body.total, body.groups.reduce((sum: number, g: any) => sum + g.count, 0) + body.other);

  const outcomes = await stats('?group_by=outcome&action_prefix=test.');
  t.deepEqual(outcomes.body.groups, [
    { key: 'success', count: 1240 },
    { key: 'failure', count: 590 },
  ]);
  t.is(outcomes.body.other, 0);
  const kinds = await stats('?group_by=actor_kind&action_prefix=test.');
  t.deepEqual(kinds.body.groups, [{ key: 'system', count: 1830 }]);
  const types = await stats('?group_by=resource_type&action_prefix=test.');
  t.deepEqual(types.body.groups, [{ key: 'thing', count: 1830 }]);
});

test('stats: the window defaults to the last 7 days; day gives every UTC day of the window', async (t) => {
  const recent = await stats('?group_by=action&action=dated.event');
  t.is(recent.body.total, 0);
  t.is(Date.parse(recent.body.to) - Date.parse(recent.body.from), 7 * 86_400_000);
  const days = await stats('?group_by=day&action=dated.event&from=2025-12-31T00:00:00Z&to=2026-01-04T00:00:00Z');
  t.deepEqual(days.body.groups, [
    { key: '2025-12-31', count: 0 },
    { key: '2026-01-01', count: 2 },
    { key: '2026-01-02', count: 0 },
    { key: '2026-01-03', count: 1 },
  ]);
  t.is(days.body.total, 3);
  t.is(days.body.other, 0);
  const ninety = await stats('?group_by=day&from=2025-10-01T00:00:00Z&to=2025-12-30T00:00:00Z');
  t.is(ninety.body.groups.length, 90);
});

test('bad filters are 422 validation_failed naming the field', async (t) => {
  const cases: Array<[string, string, string]> = [
    ['/stats', '', 'query.group_by'],
    ['/stats', '?group_by=color', 'query.group_by'],
    ['/stats', '?group_by=day&from=2025-01-01T00:00:00Z&to=2025-04-02T00:00:01Z', 'query.from'],
    ['/stats', '?group_by=day&from=2020-01-01T00:00:00Z', 'query.from'],
    ['', '?from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z', 'query.from'],
    ['', '?from=yesterday', 'query.from'],
    ['', '?outcome=maybe', 'query.outcome'],
    ['', '?actor_kind=robot', 'query.actor_kind'],
    ['', '?action=NoDots', 'query.action'],
    ['', '?action_prefix=%25', 'query.action_prefix'],
    ['', '?cursor=abc', 'query.cursor'],
    // Times no event can have (past year 9999 or before year 1), up to the bigint's limits.
    ['', '?cursor=9223372036854775807_1', 'query.cursor'],
    ['', '?cursor=-9999999999999999999_1', 'query.cursor'],
    ['', '?action=auth.token.issued&outcome=failure&cursor=253402300800000000_5', 'query.cursor'],
    ['', '?limit=101', 'query.limit'],
  ];
  for (const [path, query, location] of cases) {
    const problem = await assertProblem(
      t,
      await fetch(`${app.instance.url}/ops/audit${path}${query}`, { headers: app.headers.reader }),
      422,
      'validation_failed',
    );
    t.true(
      (problem.errors as any[]).some((e) => e.location === location),
      `${path}${query}: ${JSON.stringify(problem.errors)}`,
    );
  }
});

test('a limit that is not a whole number in range gets one plain message, whatever was sent', async (t) => {
  for (const limit of ['abc', '1.5', '0', '101', '1e400', '', '-1', '%EF%BC%95']) {
    const problem = await assertProblem(
      t,
      await fetch(`${app.instance.url}/ops/audit?limit=${limit}`, { headers: app.headers.reader }),
      422,
      'validation_failed',
    );
    t.deepEqual(problem.errors, [{ location: 'query.limit', message: 'must be a whole number from 1 to 100' }], `limit=${limit}`);
  }
  t.is((await fetch(`${app.instance.url}/ops/audit?limit=100`, { headers: app.headers.reader })).status, 200);
});

test('reading the audit log needs ops.audit.read', async (t) => {
  const other = bearer((await accountWithToken(app.db.pool, { permissions: ['ops.settings.read'] })).token);
  await assertProblem(t, await fetch(`${app.instance.url}/ops/audit`, { headers: other }), 403, 'forbidden');
  await assertProblem(t, await fetch(`${app.instance.url}/ops/audit/stats?group_by=day`, { headers: other }), 403, 'forbidden');
  await assertProblem(t, await fetch(`${app.instance.url}/ops/audit`), 401, 'unauthenticated');
});

test.serial('a read slower than 5 s stops: 503 audit_query_timeout (a held table lock stands in for a slow scan)', async (t) => {
  const blocker = await app.db.pool.connect();
  try {
    await blocker.query('begin');
    await blocker.query('lock table audit_events in access exclusive mode');
    const [list, grouped] = await Promise.all([
      fetch(`${app.instance.url}/ops/audit?outcome=failure`, { headers: app.headers.reader }),
      fetch(`${app.instance.url}/ops/audit/stats?group_by=outcome`, { headers: app.headers.reader }),
    ]);
    await assertProblem(t, list, 503, 'audit_query_timeout');
    await assertProblem(t, grouped, 503, 'audit_query_timeout');
  } finally {
    await blocker.query('rollback');
    blocker.release();
  }
  t.is((await audit('?limit=1')).status, 200);
});
