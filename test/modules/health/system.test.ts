import test from 'ava';
import { useInstances } from '../../support/fixture.ts';
import { validateSystem } from '../../support/problems.ts';

const app = useInstances(test, { env: { APP_JOB_WORKERS: '3' }, accounts: { viewer: { roles: ['ops_viewer'] } } });

test('the body matches the seed schema in every field', async (t) => {
  const response = await fetch(`${app.instance.url}/ops/system`, { headers: app.headers.viewer });
  t.is(response.status, 200);
  const body = (await response.json()) as Record<string, any>;
  t.true(validateSystem(body), JSON.stringify(validateSystem.errors));
  t.is(body.database.status, 'ok');
  t.is(body.database.error, undefined);
  t.is(body.database.migrations.pending, 0);
  t.is(body.database.migrations.current, body.database.migrations.latest);
  t.true(body.database.pool.acquires > 0);
  t.is(body.runtime.go_version, process.version);
  t.true(body.runtime.gomaxprocs >= 1);
  t.true(body.runtime.goroutines > 0);
  t.true(body.runtime.heap_in_use_bytes > 0);
  t.deepEqual(body.jobs, { workers: 3, queues: ['default'] });
  t.deepEqual(
    body.checks.map((c: { name: string }) => c.name),
    ['database', 'event_loop', 'pool', 'ratelimit'],
  );
  t.is(body.instance.id, app.instance.id);
  t.true(typeof body.runtime.event_loop_delay_p99_ms === 'number');
  t.true(typeof body.runtime.rss_bytes === 'number');
});

test('instance.id is this instance in the instance list, and it is running', async (t) => {
  const system = (await (await fetch(`${app.instance.url}/ops/system`, { headers: app.headers.viewer })).json()) as { instance: { id: string } };
  const list = (await (await fetch(`${app.instance.url}/ops/releases/instances`, { headers: app.headers.viewer })).json()) as {
    instances: Array<{ instance_id: string; running: boolean; pid: number }>;
  };
  const entry = list.instances.find((i) => i.instance_id === system.instance.id);
  t.truthy(entry);
  t.true(entry!.running);
  t.is(entry!.pid, process.pid);
});

test('nothing reveals the connection string, the database host or environment values', async (t) => {
  const text = await (await fetch(`${app.instance.url}/ops/system`, { headers: app.headers.viewer })).text();
  const url = new URL(app.db.url);
  t.false(text.includes(url.password));
  t.false(text.includes(`:${url.port}`));
  t.false(text.includes('postgres'));
  t.false(text.includes(url.pathname.slice(1)));
});

test('/livez answers without dependencies; /readyz?verbose lists the checks', async (t) => {
  t.deepEqual(await (await fetch(`${app.instance.url}/livez`)).json(), { status: 'ok' });
  const ready = await fetch(`${app.instance.url}/readyz?verbose`);
  t.is(ready.status, 200);
  const body = (await ready.json()) as { status: string; checks: Array<{ name: string; status: string }> };
  t.is(body.status, 'ok');
  t.deepEqual(
    body.checks.map((c) => [c.name, c.status]),
    [
      ['database', 'ok'],
      ['event_loop', 'ok'],
      ['pool', 'ok'],
      ['ratelimit', 'ok'],
    ],
  );
  t.deepEqual(await (await fetch(`${app.instance.url}/readyz`)).json(), { status: 'ok' });
});

test('the instance list pages newest first with a cursor, and refuses a bad one', async (t) => {
  const first = (await (await fetch(`${app.instance.url}/ops/releases/instances?limit=1`, { headers: app.headers.viewer })).json()) as {
    instances: unknown[];
    next_cursor?: string;
  };
  t.is(first.instances.length, 1);
  const bad = await fetch(`${app.instance.url}/ops/releases/instances?cursor=abc`, { headers: app.headers.viewer });
  t.is(bad.status, 422);
});
