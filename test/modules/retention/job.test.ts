import test from 'ava';
import pg from 'pg';
import { waitFor } from '../../support/cluster.ts';
import { useInstances } from '../../support/fixture.ts';
import { sendJson } from '../../support/http.ts';
import { assertProblem } from '../../support/problems.ts';
import { seedExpiring } from './seed.ts';

const app = useInstances(test, {
  env: { APP_JOB_WORKERS: '1' },
  accounts: { admin: { roles: ['platform_admin'] } },
  async seed(db) {
    // Monthly partitions two years back, as a service running that long would have made them.
    await db.pool.query(`select ensure_audit_event_partitions(now() - interval '26 months', now())`);
    await seedExpiring(db.pool);
  },
});

const markers = async (table: string, column: string) =>
  (await app.db.pool.query<{ marker: string }>(`select ${column} as marker from ${table} order by 1`)).rows.map((row) => row.marker);
const seededAudit = () => markers(`audit_events where action = 'test.seeded'`, 'resource_id');
const purgedEvents = async (afterId = '0') =>
  (
    await app.db.pool.query<{ id: string; resource_id: string; actor_label: string; metadata: any; cutoff_gap: number }>(
      `select id::text, resource_id, actor_label, metadata,
              abs(extract(epoch from ((metadata->>'before')::timestamptz - (now() - (metadata->>'retention')::interval)))) as cutoff_gap
       from audit_events where action = 'retention.purged' and id > $1 order by id`,
      [afterId],
    )
  ).rows;
const lastEventId = async () => (await app.db.pool.query<{ id: string }>(`select coalesce(max(id), 0)::text as id from audit_events`)).rows[0]!.id;

const waitForRun = (id: string, done = (run: { state: string; error: string | null }) => run.state === 'succeeded' || run.state === 'failed') =>
  waitFor(
    async () => {
      const run = (await app.db.pool.query<{ state: string; error: string | null }>('select state, error from job_runs where id = $1', [id])).rows[0]!;
      return done(run) ? run : undefined;
    },
    90_000,
    `retention run ${id}`,
  );

// As a run queued before a change would be: bypasses run-now's one-minute limit, not the job's own checks.
const queueRun = async () =>
  (
    await app.db.pool.query<{ id: string }>(
      `insert into job_runs (job, trigger, queue, max_attempts) values ('retention', 'manual', 'default', 3) returning id::text`,
    )
  ).rows[0]!.id;

test.serial('a run deletes exactly the rows past each cutoff, on the task threads, and records retention.purged per kind', async (t) => {
  const response = await sendJson('POST', `${app.instance.url}/ops/jobs/definitions/retention/run`, {}, app.headers.admin);
  t.is(response.status, 202);
  const run = await waitForRun(((await response.json()) as { id: string }).id);
  t.deepEqual(run, { state: 'succeeded', error: null });

  t.deepEqual(await seededAudit(), ['kept-boundary', 'kept-boundary', 'kept-future', 'kept-recent', 'kept-until-shortened']);
  t.deepEqual(await markers(`settings_history where name = 'test.seeded'`, 'reason'), ['kept', 'kept-recent']);
  t.deepEqual(await markers(`job_definition_history where job = 'test_seeded'`, 'reason'), ['kept']);
  t.deepEqual(await markers(`job_runs where job = 'gone_job'`, `state || ':' || requested_by`), ['queued:old-but-unfinished', 'succeeded:kept']);
  t.deepEqual(await markers(`release_instances where instance_id like 'seeded-%'`, 'instance_id'), ['seeded-recent-stopped']);

  // Whole expired months are gone as partitions; the boundary month and the later ones remain.
  const partitions = await app.db.pool.query<{ expired: boolean }>(`
    select (to_date(substr(c.relname, 15), 'YYYYMM') + interval '1 month') at time zone 'utc' <= now() - interval '8760 hours' as expired
    from pg_inherits i join pg_class c on c.oid = i.inhrelid
    where i.inhparent = 'audit_events'::regclass and c.relname ~ '^audit_events_p'`);
  t.true(partitions.rows.length >= 12);
  t.false(partitions.rows.some((row) => row.expired));

  // Kinds may finish in any order (they run side by side on the task threads): compare by kind.
  const events = await purgedEvents();
  const byKind = new Map(events.map((event) => [event.resource_id, event]));
  t.deepEqual(Object.fromEntries(events.map((event) => [event.resource_id, event.metadata.rows])), {
    audit_events: 7,
    settings_history: 2,
    job_definition_history: 1,
    job_runs: 3,
    release_instances: 2,
  });
  t.is(events.length, 5);
  for (const event of events) {
    t.is(event.actor_label, 'system:retention');
    t.true(event.cutoff_gap < 120, `${event.resource_id}: the cutoff is now minus the retention`);
    t.true(event.metadata.statements >= 1);
    // Nothing left unreported by an earlier attempt.
    t.is(event.metadata.earlier_rows, 0);
    t.regex(event.metadata.longest_statement, /^(delete batch of \d+|(count|detach|drop) audit_events_p\d{6})$/);
  }
  t.like(byKind.get('audit_events')!.metadata, { setting: 'audit.retention', retention: '8760h' });
  t.true(byKind.get('audit_events')!.metadata.partitions_dropped >= 1);
  t.like(byKind.get('release_instances')!.metadata, { setting: 'releases.instance_retention', retention: '2160h' });

  const metrics = await app.instance.registry.getSingleMetricAsString('backplane_task_duration_seconds');
  for (const kind of ['audit_events', 'settings_history', 'job_definition_history', 'job_runs', 'release_instances']) {
    t.regex(metrics, new RegExp(`_count\\{[^}]*task="retention\\.${kind}",outcome="ok"[^}]*\\} 1`));
  }
});

test.serial('a shortened retention applies on the next run', async (t) => {
  const changed = await sendJson('PUT', `${app.instance.url}/ops/settings/audit.retention`, { value: '720h', reason: 'keep a month only' }, app.headers.admin);
  t.is(changed.status, 200);
  const since = await lastEventId();
  t.deepEqual(await waitForRun(await queueRun()), { state: 'succeeded', error: null });
  t.deepEqual(await seededAudit(), ['kept-future', 'kept-recent']);
  const events = await purgedEvents(since);
  t.deepEqual(
    events.map((event) => [event.resource_id, event.metadata.rows, event.metadata.retention]),
    [['audit_events', 3, '720h']],
  );
  t.true(events[0]!.cutoff_gap < 120);
});

test.serial('a failing kind does not stop the others; the run fails naming it, and its retry completes', async (t) => {
  await app.db.pool.query(`
    insert into settings_history (name, old_value, new_value, version, reason, actor_kind, actor_id, actor_label, changed_at)
    values ('test.seeded', '1', '2', 9, 'expired-again', 'system', 'seed', 'seed', now() - interval '400 days')`);
  await app.db.pool.query(`
    insert into job_definition_history (job, version, old_config, new_config, reason, changed_at)
    values ('test_seeded', 9, '{}', '{}', 'expired-again', now() - interval '400 days')`);
  const blocker = new pg.Client({ connectionString: app.db.url });
  await blocker.connect();
  try {
    await blocker.query('begin');
    await blocker.query('lock table settings_history in access exclusive mode');
    const id = await queueRun();
    const attempt = await waitForRun(id, (run) => run.error !== null);
    t.regex(attempt.error!, /^retention_failed: 1 of 6 steps failed: settings_history \(database_error\)/);
    t.deepEqual(await markers(`job_definition_history where job = 'test_seeded'`, 'reason'), ['kept']);
    // Only the session holding the lock can read the table meanwhile.
    t.is((await blocker.query(`select 1 from settings_history where reason = 'expired-again'`)).rowCount, 1);
    await blocker.query('rollback');
    t.like(await waitForRun(id), { state: 'succeeded' });
    t.false((await markers(`settings_history where name = 'test.seeded'`, 'reason')).includes('expired-again'));
  } finally {
    await blocker.end();
  }
});

test.serial('disabled, the job deletes nothing, even a run queued before the change', async (t) => {
  const disabled = await sendJson('PUT', `${app.instance.url}/ops/jobs/definitions/retention`, { enabled: false, reason: 'legal hold' }, app.headers.admin);
  t.is(disabled.status, 200);
  await seedExpiring(app.db.pool);
  const before = {
    audit: await seededAudit(),
    settings: await markers(`settings_history where name = 'test.seeded'`, 'reason'),
    runs: await markers(`job_runs where job = 'gone_job'`, 'state'),
    instances: await markers(`release_instances where instance_id like 'seeded-%'`, 'instance_id'),
  };
  const since = await lastEventId();
  await assertProblem(
    t,
    await sendJson('POST', `${app.instance.url}/ops/jobs/definitions/retention/run`, {}, app.headers.admin),
    409,
    'job_definition_disabled',
  );
  t.deepEqual(await waitForRun(await queueRun()), { state: 'succeeded', error: null });
  t.deepEqual(
    {
      audit: await seededAudit(),
      settings: await markers(`settings_history where name = 'test.seeded'`, 'reason'),
      runs: await markers(`job_runs where job = 'gone_job'`, 'state'),
      instances: await markers(`release_instances where instance_id like 'seeded-%'`, 'instance_id'),
    },
    before,
  );
  t.deepEqual(await purgedEvents(since), []);
});
