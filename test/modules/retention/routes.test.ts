import test from 'ava';
import pg from 'pg';
import type { RunningInstance } from '../../../src/app/instance.ts';
import { waitFor } from '../../support/cluster.ts';
import { type TestDatabase, createTestDatabase } from '../../support/database.ts';
import { getJson, sendJson } from '../../support/http.ts';
import { startTestInstance } from '../../support/instance.ts';
import { assertProblem } from '../../support/problems.ts';
import { accountWithToken, bearer } from '../../support/tokens.ts';
import { seedExpiring } from './seed.ts';

let db: TestDatabase;
let instance: RunningInstance;
let admin: Record<string, string>;
let viewer: Record<string, string>;
let reader: Record<string, string>;
let other: Record<string, string>;

test.before(async () => {
  db = await createTestDatabase();
  admin = bearer((await accountWithToken(db.pool, { roles: ['platform_admin'] })).token);
  viewer = bearer((await accountWithToken(db.pool, { roles: ['ops_viewer'] })).token);
  reader = bearer((await accountWithToken(db.pool, { permissions: ['ops.settings.read'] })).token);
  other = bearer((await accountWithToken(db.pool, { permissions: ['ops.jobs.read', 'ops.audit.read'] })).token);
  await seedExpiring(db.pool);
  instance = await startTestInstance(db.url);
});

test.after.always(async () => {
  await instance?.drain();
  await db?.drop();
});

const retention = async (headers: Record<string, string> = viewer) => {
  const { status, body } = await getJson(`${instance.url}/ops/retention`, headers);
  return { status, body, kinds: Object.fromEntries((body.kinds ?? []).map((entry: any) => [entry.kind, entry])) as Record<string, any> };
};
const databaseNow = async () => (await db.pool.query<{ now: Date }>('select now()')).rows[0]!.now.getTime();
const DAY_MS = 86_400_000;
const daysBefore = (now: number, iso: string) => (now - Date.parse(iso)) / DAY_MS;

test.serial('GET /ops/retention needs a bearer with ops.settings.read', async (t) => {
  await assertProblem(t, await fetch(`${instance.url}/ops/retention`), 401, 'unauthenticated');
  await assertProblem(t, await fetch(`${instance.url}/ops/retention`, { headers: other }), 403, 'forbidden');
  t.is((await retention(reader)).status, 200);
  t.is((await retention(viewer)).status, 200);
});

test.serial('each kind shows its setting and live value, the enforcing job, the oldest row and the rows past the cutoff', async (t) => {
  const { status, body, kinds } = await retention();
  t.is(status, 200);
  t.deepEqual(body.kinds.map((entry: any) => entry.kind), ['audit_events', 'settings_history', 'job_definition_history', 'job_runs', 'release_instances']);
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
  const changed = await sendJson('PUT', `${instance.url}/ops/settings/audit.retention`, { value: '720h', reason: 'keep a month only' }, admin);
  t.is(changed.status, 200);
  t.like((await retention()).kinds.audit_events, { value: '720h', value_seconds: 2_592_000, past_cutoff: 10 });

  const disabled = await sendJson('PUT', `${instance.url}/ops/jobs/definitions/retention`, { enabled: false, reason: 'legal hold' }, admin);
  t.is(disabled.status, 200);
  for (const entry of (await retention()).body.kinds) {
    t.like(entry, { enabled: false, next_run: null });
  }
  t.is((await sendJson('PUT', `${instance.url}/ops/jobs/definitions/retention`, { enabled: true, reason: 'hold lifted' }, admin)).status, 200);
});

test.serial('after a run, nothing is past the cutoff and the last run is shown', async (t) => {
  const response = await sendJson('POST', `${instance.url}/ops/jobs/definitions/retention/run`, {}, admin);
  t.is(response.status, 202);
  const runId = ((await response.json()) as { id: string }).id;
  const { kinds } = await waitFor(async () => {
    const answer = await retention();
    return answer.kinds.audit_events.last_run?.finished_at ? answer : undefined;
  }, 90_000, 'the retention run to finish');
  for (const entry of Object.values(kinds)) {
    t.like(entry, { past_cutoff: 0, last_run: { id: runId, state: 'succeeded', error: null } });
  }
  t.is(Math.round(daysBefore(await databaseNow(), kinds.audit_events.oldest)), 10);
});

test.serial('counts that take longer than 5 s are 503 retention_query_timeout', async (t) => {
  const blocker = new pg.Client({ connectionString: db.url });
  await blocker.connect();
  try {
    await blocker.query('begin');
    await blocker.query('lock table job_definition_history in access exclusive mode');
    await assertProblem(t, await fetch(`${instance.url}/ops/retention`, { headers: viewer }), 503, 'retention_query_timeout');
  } finally {
    await blocker.query('rollback');
    await blocker.end();
  }
  t.is((await retention()).status, 200);
});
