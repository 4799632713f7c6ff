import test from 'ava';
import type { RunningInstance } from '../../../src/app/instance.ts';
import { waitFor } from '../../support/cluster.ts';
import { useInstances } from '../../support/fixture.ts';

const app = useInstances(test, {
  count: 2,
  env: (index): Record<string, string> => (index === 0 ? { APP_JOB_WORKERS: '0' } : { APP_JOB_WORKERS: '3', APP_JOB_QUEUES: 'default,reports' }),
  accounts: { viewer: { roles: ['ops_viewer'] } },
});
// The first instance consumes no job; the second has three workers on two queues.
const idle = () => app.instances[0]!;
const busy = () => app.instances[1]!;

const system = async (instance: RunningInstance) =>
  ((await (await fetch(`${instance.url}/ops/system`, { headers: app.headers.viewer })).json()) as { jobs: unknown }).jobs;

test("GET /ops/system reports each instance's own workers and queues; 0 workers consume nothing", async (t) => {
  t.deepEqual(await system(idle()), { workers: 0, queues: [] });
  t.deepEqual(await system(busy()), { workers: 3, queues: ['default', 'reports'] });
});

test('the overview lists per queue the instances consuming it, and only those', async (t) => {
  const overview = await waitFor(
    async () => {
      const body = (await (await fetch(`${idle().url}/ops/jobs/overview`, { headers: app.headers.viewer })).json()) as any;
      return body.queues.length === 2 ? body : undefined;
    },
    10_000,
    'both queues',
  );
  t.deepEqual(overview.queues, [
    { name: 'default', instances: [busy().id], workers: 3, running: 0, queued: 0 },
    { name: 'reports', instances: [busy().id], workers: 3, running: 0, queued: 0 },
  ]);
  // Without APP_TEST_JOBS only the product's jobs are defined.
  t.deepEqual(
    overview.jobs.filter((job: { name: string }) => job.name.startsWith('test_')),
    [],
  );
});
