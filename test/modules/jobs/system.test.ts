import test from 'ava';
import type { RunningInstance } from '../../../src/app/instance.ts';
import { waitFor } from '../../support/cluster.ts';
import { type TestDatabase, createTestDatabase } from '../../support/database.ts';
import { startTestInstance } from '../../support/instance.ts';
import { accountWithToken, bearer } from '../../support/tokens.ts';

let db: TestDatabase;
let token: string;
let idle: RunningInstance;
let busy: RunningInstance;

test.before(async () => {
  db = await createTestDatabase();
  token = (await accountWithToken(db.pool, { roles: ['ops_viewer'] })).token;
  idle = await startTestInstance(db.url, { APP_JOB_WORKERS: '0' });
  busy = await startTestInstance(db.url, { APP_JOB_WORKERS: '3', APP_JOB_QUEUES: 'default,reports' });
});

test.after.always(async () => {
  await idle?.drain();
  await busy?.drain();
  await db?.drop();
});

const system = async (instance: RunningInstance) =>
  ((await (await fetch(`${instance.url}/ops/system`, { headers: bearer(token) })).json()) as { jobs: unknown }).jobs;

test('GET /ops/system reports each instance\'s own workers and queues; 0 workers consume nothing', async (t) => {
  t.deepEqual(await system(idle), { workers: 0, queues: [] });
  t.deepEqual(await system(busy), { workers: 3, queues: ['default', 'reports'] });
});

test('the overview lists per queue the instances consuming it, and only those', async (t) => {
  const overview = await waitFor(async () => {
    const body = (await (await fetch(`${idle.url}/ops/jobs/overview`, { headers: bearer(token) })).json()) as any;
    return body.queues.length === 2 ? body : undefined;
  }, 10_000, 'both queues');
  t.deepEqual(overview.queues, [
    { name: 'default', instances: [busy.id], workers: 3, running: 0, queued: 0 },
    { name: 'reports', instances: [busy.id], workers: 3, running: 0, queued: 0 },
  ]);
  t.deepEqual(overview.jobs.map((job: any) => job.name), ['retention']);
});
