import test from 'ava';
import type { RunningInstance } from '../../../src/app/instance.ts';
import { sleep } from '../../../src/platform/time.ts';
import { waitFor } from '../../support/cluster.ts';
import { useInstances } from '../../support/fixture.ts';

const app = useInstances(test, { count: 3, env: { APP_TEST_JOBS: '1' }, accounts: { admin: { roles: ['platform_admin'] } } });

const change = (instance: RunningInstance, body: unknown) =>
  fetch(`${instance.url}/ops/jobs/definitions/test_tick`, {
    method: 'PUT',
    headers: { ...app.headers.admin, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });

interface TickRow {
  slot: Date;
  state: string;
  instance_id: string | null;
  created_at: Date;
}

const ticks = async (since: Date) =>
  (
    await app.db.pool.query<TickRow>(`select slot, state, instance_id, created_at from job_runs where job = 'test_tick' and created_at > $1 order by slot`, [
      since,
    ])
  ).rows;

const databaseNow = async () => (await app.db.pool.query<{ now: Date }>('select now()')).rows[0]!.now;

test.serial('three instances, an every-second job: exactly one run per slot, none missing', async (t) => {
  const start = await databaseNow();
  await sleep(6_000);
  const end = await databaseNow();
  const rows = (await ticks(start)).filter((row) => row.slot.getTime() < end.getTime() - 1_000);
  t.true(rows.length >= 4, `only ${rows.length} slots`);
  const slots = rows.map((row) => row.slot.getTime());
  t.is(new Set(slots).size, slots.length);
  for (let i = 1; i < slots.length; i += 1) {
    t.is(slots[i]! - slots[i - 1]!, 1_000, `gap before ${new Date(slots[i]!).toISOString()}`);
  }
  t.true(rows.every((row) => row.state === 'succeeded'));
  const ids = new Set(app.instances.map((instance) => instance.id));
  t.true(rows.every((row) => ids.has(row.instance_id!)));
});

test.serial('disabled through one instance, no instance creates another slot; re-enabled, slots resume', async (t) => {
  const disabled = await change(app.instances[0]!, { enabled: false, reason: 'quiet please' });
  t.is(disabled.status, 200);
  const after = await databaseNow();
  await sleep(2_500);
  t.deepEqual(await ticks(after), []);
  const listed = (await (await fetch(`${app.instances[2]!.url}/ops/jobs/definitions`, { headers: app.headers.admin })).json()) as any;
  t.like(
    listed.definitions.find((d: { name: string }) => d.name === 'test_tick'),
    { enabled: false, next_run_at: null },
  );
  await waitFor(
    async () => {
      const { rows } = await app.db.pool.query(`select 1 from job_runs where job = 'test_tick' and state in ('queued', 'running')`);
      return rows.length === 0 ? true : undefined;
    },
    5_000,
    'the last run to finish',
  );

  const enabled = await change(app.instances[1]!, { enabled: true, reason: 'back on' });
  t.is(enabled.status, 200);
  const resumed = await databaseNow();
  const rows = await waitFor(
    async () => {
      const found = await ticks(resumed);
      return found.length >= 2 ? found : undefined;
    },
    5_000,
    'slots after re-enabling',
  );
  t.true(rows.every((row) => row.slot.getTime() >= resumed.getTime() - 1_000));
});

test.serial('a new schedule set through one instance is what every instance follows', async (t) => {
  t.is((await change(app.instances[2]!, { schedule: '@every 2s', reason: 'half as often' })).status, 200);
  const after = await databaseNow();
  await sleep(5_000);
  const rows = await ticks(after);
  t.true(rows.length >= 2);
  t.true(rows.every((row) => row.slot.getTime() % 2_000 === 0));
  t.is((await change(app.instances[0]!, { schedule: null, reason: 'as before' })).status, 200);
});
