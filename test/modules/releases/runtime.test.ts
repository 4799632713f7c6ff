import test from 'ava';
import { waitFor } from '../../support/cluster.ts';
import { useInstances } from '../../support/fixture.ts';

const app = useInstances(test, { count: 2, env: { APP_HEARTBEAT_SECONDS: '1' }, accounts: { viewer: { roles: ['ops_viewer'] } } });

interface Entry {
  instance_id: string;
  running: boolean;
  runtime: Record<string, unknown> | null;
}

const instances = async () =>
  ((await (await fetch(app.url('/ops/releases/instances'), { headers: app.headers.viewer })).json()) as { instances: Entry[] }).instances;

test('every running instance carries its own runtime snapshot, written with its heartbeat; a stopped one carries none', async (t) => {
  await app.db.pool.query(
    `insert into release_instances (instance_id, version, runtime_version, host, pid, stopped_at, runtime)
     values ('gone', '0.0.1', 'v20', 'old-host', 1, now(), '{"version": "0.0.1"}')`,
  );
  const ids = app.instances.map((instance) => instance.id);
  const entries = await waitFor(
    async () => {
      const listed = await instances();
      return ids.every((id) => listed.find((entry) => entry.instance_id === id)?.runtime) ? listed : undefined;
    },
    10_000,
    'a snapshot from each instance',
  );
  for (const id of ids) {
    const runtime = entries.find((entry) => entry.instance_id === id)!.runtime!;
    t.deepEqual(Object.keys(runtime).sort(), [
      'event_loop_delay_p99_ms',
      'heap_in_use_bytes',
      'pool_in_use',
      'pool_waiting',
      'taken_at',
      'uptime_seconds',
      'version',
    ]);
    t.true((runtime.heap_in_use_bytes as number) > 0);
    t.true((runtime.pool_waiting as number) >= 0 && (runtime.pool_in_use as number) >= 0);
    t.true(Date.parse(runtime.taken_at as string) > Date.now() - 60_000);
  }
  t.like(
    entries.find((entry) => entry.instance_id === 'gone'),
    { running: false, runtime: null },
  );
});
