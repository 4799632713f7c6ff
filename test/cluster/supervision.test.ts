import test from 'ava';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { type TestCluster, runCli, startCluster, waitFor } from '../support/cluster.ts';

// The real `serve` with its own embedded PostgreSQL: the primary must notice what dies under it.
const dataDir = mkdtempSync(join(tmpdir(), 'backplane-supervision-'));
// As root the server runs as the postgres user, which must be able to enter this folder.
chmodSync(dataDir, 0o755);
let cluster: TestCluster;
let db: pg.Pool;

const metrics = async () => (await fetch(cluster.metricsUrl)).text();
const postmasterPid = () => Number(readFileSync(join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);
const runningInstances = async () =>
  (await db.query<{ instance_id: string; pid: number }>('select instance_id, pid from release_instances where stopped_at is null')).rows;

test.before(async () => {
  cluster = await startCluster('', 2, { APP_DATA_DIR: dataDir, APP_INSTANCE_LIVENESS_SECONDS: '5', APP_HEARTBEAT_SECONDS: '1' });
  const portLine = readFileSync(join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[3];
  const password = readFileSync(join(dataDir, 'postgres.secret'), 'utf8').trim();
  db = new pg.Pool({ connectionString: `postgres://backplane:${encodeURIComponent(password)}@127.0.0.1:${Number(portLine)}/backplane`, max: 1 });
  db.on('error', () => undefined);
});

test.after.always(async () => {
  await db?.end().catch(() => undefined);
  await cluster?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

test.serial('a killed embedded PostgreSQL is restarted by the primary, counted, and /readyz is 200 again', async (t) => {
  const before = postmasterPid();
  process.kill(before, 'SIGKILL');
  await waitFor(
    async () => (/backplane_embedded_database_restarts_total\{role="primary"\} [1-9]/.test(await metrics()) ? true : undefined),
    60_000,
    'the database restart',
  );
  t.not(postmasterPid(), before);
  const ready = await waitFor(async () => ((await fetch(`${cluster.url}/readyz`)).status === 200 ? true : undefined), 60_000, '/readyz 200');
  t.true(ready);
  t.regex(cluster.output(), /embedded PostgreSQL restarted/);
});

test.serial('an instance whose event loop is stopped beyond the liveness time is killed and replaced', async (t) => {
  const before = await waitFor(
    async () => {
      const rows = await runningInstances();
      return rows.length === 2 ? rows : undefined;
    },
    30_000,
    'two running instances',
  );
  const victim = before[0]!;
  process.kill(victim.pid, 'SIGSTOP');
  try {
    await waitFor(
      async () => (/backplane_instance_restarts_total\{reason="unresponsive"[^}]*\} [1-9]/.test(await metrics()) ? true : undefined),
      60_000,
      'the unresponsive instance to be replaced',
    );
  } finally {
    // Harmless if it is gone; a stopped process left behind would outlive the test.
    try {
      process.kill(victim.pid, 'SIGCONT');
    } catch {
      // already gone
    }
  }
  const replacement = await waitFor(
    async () => {
      const rows = await runningInstances();
      return rows.find((row) => !before.some((old) => old.instance_id === row.instance_id));
    },
    60_000,
    'a new instance id',
  );
  t.not(replacement.pid, victim.pid);
  t.regex(cluster.output(), /did not answer the liveness ping/);
  t.is((await fetch(`${cluster.url}/livez`)).status, 200);
});

for (const [name, env] of [
  ['APP_JWT_PRIVATE_KEY', { APP_JWT_PRIVATE_KEY: 'garbage' }],
  ['HOST', { HOST: 'no-such-host.invalid' }],
  ['APP_TRUSTED_PROXIES', { APP_TRUSTED_PROXIES: '2000::/3' }],
  ['DATABASE_URL', { NODE_ENV: 'production', APP_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64') }],
] as const) {
  test(`serve refuses a bad ${name} with exit 2, one line naming it, and no instance forked`, async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'backplane-refused-'));
    try {
      const result = await runCli(['serve'], {
        DATABASE_URL: '',
        APP_DATA_DIR: dir,
        APP_INSTANCES: '1',
        APP_METRICS_PORT: '0',
        PORT: '0',
        LOG_LEVEL: 'info',
        ...env,
      });
      t.is(result.code, 2);
      const lines = result.stderr.trim().split('\n');
      t.is(lines.length, 1, result.stderr);
      t.regex(lines[0]!, new RegExp(`^backplane: .*${name}`));
      t.notRegex(result.stdout, /instance started|embedded PostgreSQL/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

test('other commands that would start an embedded database refuse it in production too', async (t) => {
  const result = await runCli(['migrate', 'status'], { DATABASE_URL: '', NODE_ENV: 'production' });
  t.is(result.code, 2);
  t.regex(result.stderr, /DATABASE_URL/);
});
