import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { loadConfig } from '../../src/app/config.ts';
import {
  type Check,
  type DoctorContext,
  apiFilesCheck,
  clockCheck,
  configurationCheck,
  databaseCheck,
  instancesCheck,
  jobsCheck,
  limiterCheck,
  migrationsCheck,
  poolSizeCheck,
  providersCheck,
  runCheck,
  trustedProxiesCheck,
} from '../../src/commands/doctorChecks.ts';
import { withServices } from '../../src/commands/services.ts';
import { packageRoot } from '../../src/platform/packageRoot.ts';
import { runCli } from '../support/cluster.ts';
import { type TestDatabase, createTestDatabase } from '../support/database.ts';

let db: TestDatabase;

test.before(async () => {
  db = await createTestDatabase();
});

test.after.always(async () => {
  await db?.drop();
});

const unreachable = () => Promise.reject(new Error('connection refused'));

/** Runs one check against the test database with the real services; overrides replace parts of the context. */
async function check(target: Check, overrides: Partial<DoctorContext> = {}) {
  const config = loadConfig({ DATABASE_URL: db.url });
  return withServices(db.pool, db.url, config, ({ jobs }) =>
    runCheck(target, {
      env: { DATABASE_URL: db.url },
      config,
      pool: db.pool,
      jobs,
      apiFiles: { dir: join(packageRoot, 'api') },
      hostNow: () => Date.now(),
      fetchText: unreachable,
      ...overrides,
    }),
  );
}

test('configuration: ok when every variable parses; fail on a bad variable or production without keys', async (t) => {
  t.is((await check(configurationCheck)).status, 'ok');
  const bad = await check(configurationCheck, { env: { APP_INSTANCES: '0' } });
  t.is(bad.status, 'fail');
  t.regex(bad.message, /APP_INSTANCES/);
  const keyless = await check(configurationCheck, { env: { NODE_ENV: 'production', DATABASE_URL: db.url } });
  t.is(keyless.status, 'fail');
  t.regex(keyless.message, /APP_ENCRYPTION_KEY/);
});

test('configuration: production needs the encryption key, from the variable or its file, and no signing key (sealed in the database)', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'doctor-secrets-'));
  try {
    const path = join(dir, 'key');
    writeFileSync(path, `${'ab'.repeat(32)}\n`, { mode: 0o600 });
    t.is((await check(configurationCheck, { env: { NODE_ENV: 'production', DATABASE_URL: db.url, APP_ENCRYPTION_KEY_FILE: path } })).status, 'ok');
    // A key file any user may read works, with a warning that names it.
    chmodSync(path, 0o644);
    const open = await check(configurationCheck, { env: { NODE_ENV: 'production', DATABASE_URL: db.url, APP_ENCRYPTION_KEY_FILE: path } });
    t.is(open.status, 'warn');
    t.regex(open.message, new RegExp(`APP_ENCRYPTION_KEY_FILE: ${path} is readable by every user`));
    t.is((await check(configurationCheck, { env: { NODE_ENV: 'production', DATABASE_URL: db.url, APP_ENCRYPTION_KEY: 'ab'.repeat(32) } })).status, 'ok');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('database: ok on a supported server; fail on PostgreSQL older than 14', async (t) => {
  t.is((await check(databaseCheck)).status, 'ok');
  const old = { query: async () => ({ rows: [{ num: '130012', version: '13.12' }] }) } as unknown as DoctorContext['pool'];
  const result = await check(databaseCheck, { pool: old });
  t.is(result.status, 'fail');
  t.regex(result.message, /13\.12/);
});

test.serial('migrations: ok when current; fail when the database is ahead of the code', async (t) => {
  t.is((await check(migrationsCheck)).status, 'ok');
  await db.pool.query(`insert into schema_migrations (version, name) values (29991231000000, 'from_the_future')`);
  try {
    const result = await check(migrationsCheck);
    t.is(result.status, 'fail');
    t.regex(result.message, /29991231000000/);
  } finally {
    await db.pool.query(`delete from schema_migrations where version = 29991231000000`);
  }
});

test('api files: ok when in step with the routes; fail when missing or stale', async (t) => {
  t.is((await check(apiFilesCheck)).status, 'ok');
  const empty = mkdtempSync(join(tmpdir(), 'doctor-api-'));
  try {
    const result = await check(apiFilesCheck, { apiFiles: { dir: empty } });
    t.is(result.status, 'fail');
    t.regex(result.message, /openapi\.json.*backplane openapi/);
  } finally {
    rmSync(empty, { recursive: true, force: true });
  }
});

test('clock: ok when host and database agree; fail when the host is a minute off', async (t) => {
  t.is((await check(clockCheck)).status, 'ok');
  const result = await check(clockCheck, { hostNow: () => Date.now() + 60_000 });
  t.is(result.status, 'fail');
  t.regex(result.message, /ahead of the database/);
});

test('pool size: ok for one instance; fail when the instances need more connections than the server allows', async (t) => {
  const config = loadConfig({ DATABASE_URL: db.url, APP_INSTANCES: '1' });
  t.is((await check(poolSizeCheck, { config })).status, 'ok');
  const result = await check(poolSizeCheck, { config: { ...config, instances: 64 } });
  t.is(result.status, 'fail');
  t.regex(result.message, /64 instance\(s\) may hold 1092 connections/);
});

test.serial('instances: warn with none running, ok with one version, warn on mixed versions', async (t) => {
  t.is((await check(instancesCheck)).status, 'warn');
  await db.pool.query(`insert into release_instances (instance_id, version, runtime_version, host, pid) values ('doctor-a', '0.6.0', 'v20', 'h', 1)`);
  t.is((await check(instancesCheck)).status, 'ok');
  await db.pool.query(`insert into release_instances (instance_id, version, runtime_version, host, pid) values ('doctor-b', '0.5.0', 'v20', 'h', 2)`);
  const mixed = await check(instancesCheck);
  t.is(mixed.status, 'warn');
  t.regex(mixed.message, /0\.5\.0 \(1\), 0\.6\.0 \(1\)/);
  await db.pool.query(`update release_instances set stopped_at = now() where instance_id like 'doctor-%'`);
});

test.serial('jobs: ok with nothing wrong; warn when a last run failed; fail when runs wait on a queue nobody consumes', async (t) => {
  const fine = await check(jobsCheck);
  t.is(fine.status, 'ok', fine.message);
  await db.pool.query(
    `insert into job_runs (job, trigger, queue, state, attempts, max_attempts, started_at, finished_at, error)
     values ('ratelimit_cleanup', 'manual', 'default', 'failed', 1, 1, now() - interval '1 minute', now(), 'boom')`,
  );
  const failing = await check(jobsCheck);
  t.is(failing.status, 'warn');
  t.regex(failing.message, /ratelimit_cleanup/);
  await db.pool.query(`insert into job_runs (job, trigger, queue, max_attempts) values ('ratelimit_cleanup', 'manual', 'default', 1)`);
  const stranded = await check(jobsCheck);
  t.is(stranded.status, 'fail');
  t.regex(stranded.message, /1 run\(s\) queued on default/);
  await db.pool.query(`delete from job_runs`);
});

test.serial('trusted proxies: ok when set or requests come straight; warn when unset and requests come from private addresses', async (t) => {
  t.is((await check(trustedProxiesCheck)).status, 'ok');
  await db.pool.query(
    `insert into audit_events (actor_kind, action, outcome, client_ip) select 'anonymous', 'test.proxied.request', 'failure', '10.1.2.3' from generate_series(1, 12)`,
  );
  // The audit log is append-only: these events stay, and only this check reads client addresses.
  const unset = await check(trustedProxiesCheck);
  t.is(unset.status, 'warn');
  t.regex(unset.message, /12 of the last day's 12 audited requests came from private addresses/);
  const config = loadConfig({ DATABASE_URL: db.url, APP_TRUSTED_PROXIES: '10.0.0.0/8' });
  t.is((await check(trustedProxiesCheck, { config })).status, 'ok');
});

test('rate limiter: skip when no instance answers; ok when the database decides; warn, then fail, while deciding alone', async (t) => {
  const unchecked = await check(limiterCheck);
  t.is(unchecked.status, 'skip');
  t.regex(unchecked.message, /not checked/);
  const metrics = (since: number) => async () => ({ status: 200, text: `# HELP x\nbackplane_ratelimit_alone_since_seconds ${since}\n` });
  t.is((await check(limiterCheck, { fetchText: metrics(0) })).status, 'ok');
  t.is((await check(limiterCheck, { fetchText: metrics(Date.now() / 1000 - 20) })).status, 'warn');
  const long = await check(limiterCheck, { fetchText: metrics(Date.now() / 1000 - 3600) });
  t.is(long.status, 'fail');
  t.regex(long.message, /alone for 36\d\d s/);
});

test('providers: skip when none are configured; ok when all answer discovery; fail when one does not', async (t) => {
  t.is((await check(providersCheck)).status, 'skip');
  const server = createServer((request, response) => {
    response.statusCode = request.url?.startsWith('/good/') ? 200 : 404;
    response.end('{}');
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const provider = (name: string, path: string) => ({
    name,
    issuer: `${base}/${path}`,
    clientId: 'c',
    clientSecret: 's',
    scopes: ['openid'],
    authMethod: 'client_secret_basic' as const,
    authorizationParams: {},
    insecureLoopback: true,
  });
  const fetchText = async (url: string) => {
    const response = await fetch(url, { signal: AbortSignal.timeout(10_000) });
    return { status: response.status, text: await response.text() };
  };
  try {
    const config = loadConfig({ DATABASE_URL: db.url });
    t.is((await check(providersCheck, { config: { ...config, oidcProviders: [provider('good', 'good')] }, fetchText })).status, 'ok');
    const result = await check(providersCheck, { config: { ...config, oidcProviders: [provider('good', 'good'), provider('gone', 'gone')] }, fetchText });
    t.is(result.status, 'fail');
    t.regex(result.message, /gone .*HTTP 404/);
  } finally {
    server.close();
  }
});

test.serial('backplane doctor prints one line per check and exits 1 on a fail', async (t) => {
  const env = { DATABASE_URL: db.url, APP_METRICS_PORT: '1' };
  const result = await runCli(['doctor', '--json'], env);
  const body = JSON.parse(result.stdout) as { ok: boolean; checks: Array<{ check: string; status: string; message: string }> };
  t.deepEqual(
    body.checks.map((entry) => entry.check),
    ['configuration', 'database', 'migrations', 'clock', 'pool_size', 'instances', 'jobs', 'trusted_proxies', 'api_files', 'rate_limiter', 'providers'],
  );
  t.is(result.code, body.ok ? 0 : 1);
  const empty = mkdtempSync(join(tmpdir(), 'doctor-api-'));
  try {
    const failing = await runCli(['doctor', '--api-dir', empty], env);
    t.is(failing.code, 1);
    t.regex(failing.stdout, /^fail +api_files +/m);
    t.regex(failing.stdout, /^STATUS +CHECK +FINDING$/m);
  } finally {
    rmSync(empty, { recursive: true, force: true });
  }
  const broken = await runCli(['doctor'], { APP_INSTANCES: 'many' });
  t.is(broken.code, 1);
  t.regex(broken.stdout, /^fail +configuration +APP_INSTANCES/m);
  t.regex(broken.stdout, /^skip +migrations +/m);
  const unreachableDb = JSON.parse(
    (await runCli(['doctor', '--json'], { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none', APP_METRICS_PORT: '1' })).stdout,
  ) as { checks: Array<{ check: string; status: string }> };
  t.like(
    unreachableDb.checks.find((entry) => entry.check === 'database'),
    { status: 'fail' },
  );
  t.like(
    unreachableDb.checks.find((entry) => entry.check === 'migrations'),
    { status: 'skip' },
  );
  t.false(unreachableDb.checks.some((entry) => entry.status === 'ok' && entry.check !== 'configuration' && entry.check !== 'api_files'));
});
