import test from 'ava';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type TestCluster, startCluster, waitFor } from '../support/cluster.ts';
import { type TestDatabase, createTestDatabase } from '../support/database.ts';
import { accountWithToken, bearer } from '../support/tokens.ts';

let db: TestDatabase;
let cluster: TestCluster;
let token: string;
let secrets: string;

interface InstanceEntry {
  instance_id: string;
  running: boolean;
  pid: number;
  stopped_at: string | null;
}

const instances = async () =>
  ((await (await fetch(`${cluster.url}/ops/releases/instances`, { headers: bearer(token) })).json()) as { instances: InstanceEntry[] }).instances;

const answeringIds = async (requests: number) => {
  const ids = new Set<string>();
  for (let i = 0; i < requests; i += 1) {
    // A new connection each time, so the primary spreads them over the instances.
    const response = await fetch(`${cluster.url}/ops/system`, { headers: { ...bearer(token), Connection: 'close' } });
    ids.add(((await response.json()) as { instance: { id: string } }).instance.id);
  }
  return ids;
};

test.before(async () => {
  db = await createTestDatabase();
  token = (await accountWithToken(db.pool, { roles: ['platform_admin'] })).token;
  // The database URL and its password as files, as the kit mounts them (ADR 0124): the primary and every instance read them.
  secrets = mkdtempSync(join(tmpdir(), 'backplane-cluster-secrets-'));
  const url = new URL(db.url);
  writeFileSync(join(secrets, 'password'), `${decodeURIComponent(url.password)}\n`);
  url.password = '';
  writeFileSync(join(secrets, 'url'), `${url.toString()}\n`);
  cluster = await startCluster('', 2, {
    APP_HEARTBEAT_SECONDS: '1',
    DATABASE_URL: '',
    DATABASE_URL_FILE: join(secrets, 'url'),
    PGPASSWORD_FILE: join(secrets, 'password'),
  });
});

test.after.always(async () => {
  await cluster?.stop();
  await db?.drop();
  rmSync(secrets, { recursive: true, force: true });
});

test.serial('every answering instance is listed as running', async (t) => {
  const ids = await answeringIds(12);
  t.is(ids.size, 2);
  const listed = await instances();
  for (const id of ids) {
    t.true(listed.find((entry) => entry.instance_id === id)?.running, id);
  }
});

test.serial('metrics on the metrics port carry heap, GC and event-loop series for every instance', async (t) => {
  const text = await waitFor(
    async () => {
      const body = await (await fetch(cluster.metricsUrl)).text();
      return body.includes('worker="1"') && body.includes('worker="2"') ? body : undefined;
    },
    10_000,
    'metrics from both workers',
  );
  for (const worker of ['1', '2']) {
    t.regex(text, new RegExp(`nodejs_heap_size_used_bytes\\{[^}]*worker="${worker}"`));
    t.regex(text, new RegExp(`nodejs_eventloop_lag_p99_seconds\\{[^}]*worker="${worker}"`));
    t.regex(text, new RegExp(`backplane_runtime_gc_total\\{[^}]*worker="${worker}"`));
    t.regex(text, new RegExp(`backplane_db_pool_connections\\{[^}]*worker="${worker}"`));
  }
  t.regex(text, /backplane_http_request_duration_seconds_count\{[^}]*route="\/ops\/system"/);
  const api = await fetch(`${cluster.url}/metrics`);
  t.is(api.status, 404);
});

test.serial('a killed instance is restarted with a new id, and the old one stops counting as running', async (t) => {
  const before = await instances();
  const victim = before.find((entry) => entry.running)!;
  process.kill(victim.pid, 'SIGKILL');
  const after = await waitFor(
    async () => {
      const list = await instances();
      const running = list.filter((entry) => entry.running);
      const old = list.find((entry) => entry.instance_id === victim.instance_id);
      return running.length === 2 && old && !old.running ? list : undefined;
    },
    20_000,
    'a replacement instance',
  );
  const ids = await answeringIds(12);
  t.false(ids.has(victim.instance_id));
  t.is(ids.size, 2);
  t.true([...ids].every((id) => after.find((entry) => entry.instance_id === id)?.running));
});

test.serial('SIGTERM drains: in-flight requests finish, instances are marked stopped, exit 0', async (t) => {
  const ids = await answeringIds(6);
  // Hold the migration ledger so /ops/system waits inside the instance while the drain begins.
  const blocker = await db.pool.connect();
  await blocker.query('begin');
  await blocker.query('lock table schema_migrations in access exclusive mode');
  const inFlight = fetch(`${cluster.url}/ops/system`, { headers: bearer(token) });
  await new Promise((resolve) => setTimeout(resolve, 400));
  const stopped = cluster.stop();
  await new Promise((resolve) => setTimeout(resolve, 600));
  await blocker.query('rollback');
  blocker.release();
  const response = await inFlight;
  t.is(response.status, 200);
  t.is(((await response.json()) as any).database.status, 'ok');
  t.is(await stopped, 0);
  const rows = await db.pool.query<{ instance_id: string; stopped_at: Date | null }>(
    'select instance_id, stopped_at from release_instances where instance_id = any($1)',
    [[...ids]],
  );
  t.is(rows.rowCount, ids.size);
  t.true(rows.rows.every((row) => row.stopped_at !== null));
});
