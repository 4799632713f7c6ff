import test from 'ava';
import pg from 'pg';
import { waitFor } from '../../support/cluster.ts';
import { useInstances } from '../../support/fixture.ts';
import { getJson, sendJson } from '../../support/http.ts';
import { assertProblem } from '../../support/problems.ts';
import { seedExpiring } from './seed.ts';

const app = useInstances(test, {
  accounts: {
    admin: { roles: ['platform_admin'] },
    viewer: { roles: ['ops_viewer'] },
    reader: { permissions: ['ops.settings.read'] },
    other: { permissions: ['ops.jobs.read', 'ops.audit.read'] },
  },
  seed: (db) => seedExpiring(db.pool),
});

const retention = async (headers: Record<string, string> = app.headers.viewer) => {
  const { status, body } = await getJson(`${app.instance.url}/ops/retention`, headers);
  return { status, body, kinds: Object.fromEntries((body.kinds ?? []).map((entry: any) => [entry.kind, entry])) as Record<string, any> };
};
const databaseNow = async () => (await app.db.pool.query<{ now: Date }>('select now()')).rows[0]!.now.getTime();
const DAY_MS = 86_400_000;
const daysBefore = (now: number, iso: string) => (now - Date.parse(iso)) / DAY_MS;

test.serial('GET /ops/retention needs a bearer with ops.settings.read', async (t) => {
  await assertProblem(t, await fetch(`${app.instance.url}/ops/retention`), 401, 'unauthenticated');
  await assertProblem(t, await fetch(`${app.instance.url}/ops/retention`, { headers: app.headers.other }), 403, 'forbidden');
  t.is((await retention(app.headers.reader)).status, 200);
  t.is((await retention(app.headers.viewer)).status, 200);
});

test.serial('each kind shows its setting and live value, the enforcing job, the oldest row and the rows past the cutoff', async (t) => {
  const { status, body, kinds } = await retention();
  t.is(status, 200);
  t.deepEqual(
    body.kinds.map((entry: any) => entry.kind),
    ['audit_events', 'settings_history', 'job_definition_history', 'job_runs', 'release_instances'],
  );
  const now = await databaseNow();
  const nextRun = new Date(now);
  nextRun.setUTCHours(4, 15, 0, 0);
  if (nextRun.getTime() <= now) {
    nextRun.setUTCDate(nextRun.getUTCDate() + 1);
  }
  for (const entry of body.kinds) {
    t.like(entry, { job: 'retention', enabled: true, last_run: null, next_run: nextRun.toISOString() });
    t.true(Math.abs(daysBefore(now, entry.cutoff) * 86_400 - entry.value_seconds) < 5);
  }
  t.like(kinds.audit_events, { setting: 'audit.retention', value: '8760h', value_seconds: 31_536_000, oldest: '2000-01-01T00:00:00.000Z', past_cutoff: 7 });
  t.like(kinds.settings_history, { setting: 'ops.history_retention', value: '8760h', past_cutoff: 2 });
  t.like(kinds.job_definition_history, { setting: 'ops.history_retention', past_cutoff: 1 });
  t.like(kinds.job_runs, { setting: 'ops.history_retention', past_cutoff: 3 });
  t.like(kinds.release_instances, { setting: 'releases.instance_retention', value: '2160h', value_seconds: 7_776_000, past_cutoff: 2 });
  t.is(Math.round(daysBefore(now, kinds.settings_history.oldest)), 400);
  t.is(Math.round(daysBefore(now, kinds.job_definition_history.oldest)), 400);
  // The queued run of 400 days ago is not retention's; the oldest finished one is.
  t.is(Math.round(daysBefore(now, kinds.job_runs.oldest)), 400);
  t.is(Math.round(daysBefore(now, kinds.release_instances.oldest)), 100);
});

test.serial('a changed setting shows at once, and a disabled job has no next run', async (t) => {
  const changed = await sendJson('PUT', `${app.instance.url}/ops/settings/audit.retention`, { value: '720h', reason: 'keep a month only' }, app.headers.admin);
  t.is(changed.status, 200);
  t.like((await retention()).kinds.audit_events, { value: '720h', value_seconds: 2_592_000, past_cutoff: 10 });

  const disabled = await sendJson('PUT', `${app.instance.url}/ops/jobs/definitions/retention`, { enabled: false, reason: 'legal hold' }, app.headers.admin);
  t.is(disabled.status, 200);
  for (const entry of (await retention()).body.kinds) {
    t.like(entry, { enabled: false, next_run: null });
  }
  t.is((await sendJson('PUT', `${app.instance.url}/ops/jobs/definitions/retention`, { enabled: true, reason: 'hold lifted' }, app.headers.admin)).status, 200);
});

test.serial('after a run, nothing is past the cutoff, the last run is shown, and rows an earlier attempt left unreported are audited', async (t) => {
  // What an attempt killed after committing batches of 5 rows leaves behind (issue 30 item 10).
  await app.db.pool.query(`insert into purge_ledger (kind, rows) values ('settings_history', 3), ('settings_history', 2)`);
  const before = (await retention()).kinds;
  t.deepEqual(Object.fromEntries(Object.entries(before).map(([kind, entry]) => [kind, entry.deleted_unreported])), {
    audit_events: 0,
    settings_history: 5,
    job_definition_history: 0,
    job_runs: 0,
    release_instances: 0,
  });
  const response = await sendJson('POST', `${app.instance.url}/ops/jobs/definitions/retention/run`, {}, app.headers.admin);
  t.is(response.status, 202);
  const runId = ((await response.json()) as { id: string }).id;
  const { kinds } = await waitFor(
    async () => {
      const answer = await retention();
      return answer.kinds.audit_events.last_run?.finished_at ? answer : undefined;
    },
    90_000,
    'the retention run to finish',
  );
  for (const entry of Object.values(kinds)) {
    t.like(entry, { past_cutoff: 0, deleted_unreported: 0, last_run: { id: runId, state: 'succeeded', error: null } });
  }
  const event = await app.db.pool.query<{ metadata: { rows: number; earlier_rows: number } }>(
    `select metadata from audit_events where action = 'retention.purged' and resource_id = 'settings_history'`,
  );
  t.deepEqual(
    event.rows.map((row) => [row.metadata.rows, row.metadata.earlier_rows]),
    [[before.settings_history.past_cutoff + 5, 5]],
  );
  t.is(Math.round(daysBefore(await databaseNow(), kinds.audit_events.oldest)), 10);
});

test.serial('counts that take longer than 5 s are 503 retention_query_timeout', async (t) => {
  const blocker = new pg.Client({ connectionString: app.db.url });
  await blocker.connect();
  try {
    await blocker.query('begin');
    await blocker.query('lock table job_definition_history in access exclusive mode');
    await assertProblem(t, await fetch(`${app.instance.url}/ops/retention`, { headers: app.headers.viewer }), 503, 'retention_query_timeout');
  } finally {
    await blocker.query('rollback');
    await blocker.end();
  }
  t.is((await retention()).status, 200);
});
