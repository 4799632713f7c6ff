import test from 'ava';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../../src/app/config.ts';
import { connectionBudget } from '../../src/app/connectionBudget.ts';

test('development defaults work with nothing set', (t) => {
  const config = loadConfig({});
  t.is(config.port, 8080);
  t.is(config.metricsPort, 9464);
  t.is(config.databaseUrl, undefined);
  t.true(config.instances >= 1);
});

for (const [name, value] of [
  ['PORT', 'eighty'],
  ['APP_INSTANCES', '0'],
  ['APP_JOB_WORKERS', '-1'],
  ['APP_METRICS_PORT', '70000'],
  ['LOG_LEVEL', 'loud'],
  ['DATABASE_URL', 'mysql://x'],
  ['APP_PUBLIC_URL', 'not a url'],
  ['DATABASE_POOL_SIZE', '1'],
  ['DATABASE_RATELIMIT_POOL_SIZE', '0'],
  ['DATABASE_TASK_POOL_SIZE', '1'],
  ['DATABASE_POOLING', 'statement'],
  ['APP_RATELIMIT_BATCHING', 'cluster'],
  ['APP_RATELIMIT_SPACING_MS', '-1'],
  ['APP_RATELIMIT_SPACING_MS', '1001'],
  ['APP_RATELIMIT_SPACING_MS', '5ms'],
  ['APP_MIGRATIONS', 'skip'],
] as const) {
  test(`an invalid ${name} (${JSON.stringify(value)}) stops start-up naming the variable`, (t) => {
    const error = t.throws(() => loadConfig({ [name]: value }), { instanceOf: ConfigError });
    t.regex(error!.message, new RegExp(name));
  });
}

test('pool sizes default to 10, 4 and 3 connections and are read from the environment', (t) => {
  t.deepEqual(loadConfig({}).pools, { main: 10, rateLimit: 4, taskThread: 3 });
  t.deepEqual(loadConfig({ DATABASE_POOL_SIZE: '25', DATABASE_RATELIMIT_POOL_SIZE: '2', DATABASE_TASK_POOL_SIZE: '2' }).pools, {
    main: 25,
    rateLimit: 2,
    taskThread: 2,
  });
  t.is(loadConfig({}).databasePooling, 'session');
});

test('transaction pooling needs a direct URL for LISTEN, named in the message', (t) => {
  const pooled = { DATABASE_URL: 'postgres://app@bouncer:6432/app', DATABASE_POOLING: 'transaction' };
  t.throws(() => loadConfig(pooled), { instanceOf: ConfigError, message: /^DATABASE_LISTEN_URL/ });
  t.throws(() => loadConfig({ ...pooled, DATABASE_LISTEN_URL: 'http://db' }), { instanceOf: ConfigError, message: /^DATABASE_LISTEN_URL/ });
  t.throws(() => loadConfig({ DATABASE_LISTEN_URL: 'postgres://app@db/app' }), { instanceOf: ConfigError, message: /DATABASE_URL/ });
  const config = loadConfig({ ...pooled, DATABASE_LISTEN_URL: 'postgres://app@db:5432/app' });
  t.is(config.databasePooling, 'transaction');
  t.is(config.databaseListenUrl, 'postgres://app@db:5432/app');
});

test('the connection budget adds the pools, LISTEN and the purges of an instance that runs jobs', (t) => {
  // The pod's primary holds the decision pool for all its instances.
  t.like(connectionBudget(loadConfig({ APP_INSTANCES: '2', APP_TASK_THREADS: '2' })), {
    perInstance: 10 + 1 + 6,
    directPerInstance: 7,
    perPod: 4,
    perProcess: 38,
  });
  t.like(connectionBudget(loadConfig({ APP_INSTANCES: '1', APP_JOB_WORKERS: '0' })), { perInstance: 11, tasks: 0, perPod: 4 });
  t.like(connectionBudget(loadConfig({ APP_INSTANCES: '2', APP_TASK_THREADS: '2', APP_RATELIMIT_BATCHING: 'instance' })), {
    perInstance: 10 + 4 + 1 + 6,
    perPod: 0,
    perProcess: 42,
  });
});

test("the pod spaces one limiter's decision statements 20 ms apart unless told otherwise", (t) => {
  t.is(loadConfig({}).rateLimitSpacingMs, 20);
  t.is(loadConfig({ APP_RATELIMIT_SPACING_MS: '0' }).rateLimitSpacingMs, 0);
  t.is(loadConfig({ APP_RATELIMIT_SPACING_MS: '150' }).rateLimitSpacingMs, 150);
});

test('metrics are never served on the API port', (t) => {
  t.throws(() => loadConfig({ PORT: '9000', APP_METRICS_PORT: '9000' }), { message: /APP_METRICS_PORT/ });
});

test('the request deadline is 5 s unless APP_REQUEST_DEADLINE_SECONDS says otherwise; a bad value stops start-up naming it', (t) => {
  t.is(loadConfig({}).requestDeadlineMs, 5_000);
  t.is(loadConfig({ APP_REQUEST_DEADLINE_SECONDS: '1' }).requestDeadlineMs, 1_000);
  for (const value of ['0', '1.5', '5s', '301', '-1']) {
    t.throws(() => loadConfig({ APP_REQUEST_DEADLINE_SECONDS: value }), { instanceOf: ConfigError, message: /^APP_REQUEST_DEADLINE_SECONDS/ });
  }
});

test('job queues, lease and test jobs are read and checked', (t) => {
  t.deepEqual(loadConfig({}).jobQueues, ['default']);
  t.deepEqual(loadConfig({ APP_JOB_QUEUES: 'default, reports,default' }).jobQueues, ['default', 'reports']);
  t.is(loadConfig({}).jobLeaseSeconds, 30);
  t.false(loadConfig({}).testJobs);
  t.true(loadConfig({ APP_TEST_JOBS: '1' }).testJobs);
  t.throws(() => loadConfig({ APP_JOB_QUEUES: 'Reports' }), { message: /APP_JOB_QUEUES/ });
  t.throws(() => loadConfig({ APP_JOB_QUEUES: 'a,,b' }), { message: /APP_JOB_QUEUES/ });
  t.throws(() => loadConfig({ APP_JOB_LEASE_SECONDS: '1' }), { message: /APP_JOB_LEASE_SECONDS/ });
  t.throws(() => loadConfig({ APP_TEST_JOBS: 'yes' }), { message: /APP_TEST_JOBS/ });
  t.throws(() => loadConfig({ APP_TEST_JOBS: '1', NODE_ENV: 'production' }), { message: /APP_TEST_JOBS/ });
});

for (const value of [
  '0.0.0.0/0',
  '::/0',
  '0.0.0.0/1,128.0.0.0/1',
  '::/1,8000::/1',
  '10.0.0.0/8,proxy.internal',
  '10.0.0.0/40',
  '10.0.0.0/8,',
  // Issue 30: near-cover lists, wider than "no IPv4 prefix shorter than /8, no IPv6 shorter than /16".
  '::/1',
  '2000::/3',
  '0.0.0.0/1,128.0.0.0/2,192.0.0.0/3',
  '8.0.0.0/7',
  '::ffff:0:0/97',
]) {
  test(`APP_TRUSTED_PROXIES=${value} stops start-up naming the variable`, (t) => {
    const error = t.throws(() => loadConfig({ APP_TRUSTED_PROXIES: value }), { instanceOf: ConfigError });
    t.regex(error!.message, /APP_TRUSTED_PROXIES/);
  });
}

test('APP_TRUSTED_PROXIES refuses ranges that together trust every address with the message of /0', (t) => {
  const whole = t.throws(() => loadConfig({ APP_TRUSTED_PROXIES: '0.0.0.0/0' }), { instanceOf: ConfigError });
  const halves = t.throws(() => loadConfig({ APP_TRUSTED_PROXIES: '0.0.0.0/1,128.0.0.0/1' }), { instanceOf: ConfigError });
  t.is(halves!.message.replace('0.0.0.0/1,128.0.0.0/1', '0.0.0.0/0'), whole!.message);
});

test('APP_TRUSTED_PROXIES accepts private ranges of any width and public ones from /8 (IPv4) or /16 (IPv6)', (t) => {
  const value = '10.0.0.0/8,172.16.0.0/12,192.168.0.0/16,fc00::/7,2001:db8::/32,203.0.113.0/24,8.0.0.0/8';
  t.is(loadConfig({ APP_TRUSTED_PROXIES: value }).trustedProxies.length, 7);
});

test('APP_TRUSTED_PROXIES lists ranges; unset trusts nobody', (t) => {
  t.deepEqual(loadConfig({}).trustedProxies, []);
  t.deepEqual(
    loadConfig({ APP_TRUSTED_PROXIES: '10.0.0.0/8,127.0.0.1' }).trustedProxies.map((range) => `${range.network}/${range.prefix}`),
    ['10.0.0.0/8', '127.0.0.1/32'],
  );
});

test('production without DATABASE_URL is refused naming it, unless the embedded database is chosen', (t) => {
  const production = { NODE_ENV: 'production', APP_ENCRYPTION_KEY: 'x' };
  const error = t.throws(() => loadConfig(production), { instanceOf: ConfigError });
  t.regex(error!.message, /DATABASE_URL/);
  t.true(loadConfig({ ...production, APP_EMBEDDED_DATABASE: '1' }).embeddedDatabase);
  t.is(loadConfig({ ...production, DATABASE_URL: 'postgres://db.internal/app' }).databaseUrl, 'postgres://db.internal/app');
  t.throws(() => loadConfig({ ...production, APP_EMBEDDED_DATABASE: 'yes' }), { message: /APP_EMBEDDED_DATABASE/ });
  t.false(loadConfig({}).embeddedDatabase);
});

const ed25519Pem = () => generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();

test('APP_JWT_PRIVATE_KEY must be an Ed25519 PKCS#8 PEM', (t) => {
  const pem = ed25519Pem();
  t.is(loadConfig({ APP_JWT_PRIVATE_KEY: pem }).jwtPrivateKey, pem);
  // Environments that cannot hold newlines pass them as \n.
  t.truthy(loadConfig({ APP_JWT_PRIVATE_KEY: pem.replace(/\n/g, '\\n') }).jwtPrivateKey);
  const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
  const sec1 = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'pem', type: 'sec1' }).toString();
  for (const value of ['garbage', rsa, sec1, pem.replace('PRIVATE KEY', 'PUBLIC KEY')]) {
    const error = t.throws(() => loadConfig({ APP_JWT_PRIVATE_KEY: value }), { instanceOf: ConfigError });
    t.regex(error!.message, /APP_JWT_PRIVATE_KEY/);
  }
});

test('keep-alive timeout and instance liveness are read in seconds and checked', (t) => {
  t.is(loadConfig({}).keepAliveTimeoutMs, 65_000);
  t.is(loadConfig({ APP_KEEP_ALIVE_TIMEOUT_SECONDS: '120' }).keepAliveTimeoutMs, 120_000);
  t.is(loadConfig({}).instanceLivenessMs, 30_000);
  t.is(loadConfig({ APP_INSTANCE_LIVENESS_SECONDS: '5' }).instanceLivenessMs, 5_000);
  for (const [name, value] of [
    ['APP_KEEP_ALIVE_TIMEOUT_SECONDS', '0'],
    ['APP_KEEP_ALIVE_TIMEOUT_SECONDS', '65s'],
    ['APP_INSTANCE_LIVENESS_SECONDS', '1'],
    ['APP_INSTANCE_LIVENESS_SECONDS', 'ten'],
  ] as const) {
    t.throws(() => loadConfig({ [name]: value }), { instanceOf: ConfigError, message: new RegExp(name) });
  }
});

/** Writes secret files into a folder of the test's own; returns their paths by name. */
function secretFiles(files: Record<string, string>): Record<string, string> {
  const dir = mkdtempSync(join(tmpdir(), 'backplane-secrets-'));
  return Object.fromEntries(
    Object.entries(files).map(([name, text]) => {
      const path = join(dir, name);
      writeFileSync(path, text);
      return [name, path];
    }),
  );
}

test('every secret variable is also read from <NAME>_FILE, less its trailing newline', (t) => {
  const pem = ed25519Pem();
  const paths = secretFiles({
    url: 'postgres://app:pw@db:5432/app\n',
    key: `${'ab'.repeat(32)}\n`,
    jwt: `${pem}\n`,
    listen: 'postgres://app:pw@db-direct:5432/app\r\n',
  });
  const config = loadConfig({
    DATABASE_URL_FILE: paths.url,
    DATABASE_LISTEN_URL_FILE: paths.listen,
    APP_ENCRYPTION_KEY_FILE: paths.key,
    APP_JWT_PRIVATE_KEY_FILE: paths.jwt,
  });
  t.is(config.databaseUrl, 'postgres://app:pw@db:5432/app');
  t.is(config.databaseListenUrl, 'postgres://app:pw@db-direct:5432/app');
  t.is(config.encryptionKey, 'ab'.repeat(32));
  t.is(config.jwtPrivateKey, pem.replace(/\n$/, ''));
});

test('a variable set both directly and as _FILE stops start-up naming both; an unreadable file names its variable', (t) => {
  const paths = secretFiles({ key: 'ab'.repeat(32) });
  const both = t.throws(() => loadConfig({ APP_ENCRYPTION_KEY: 'cd'.repeat(32), APP_ENCRYPTION_KEY_FILE: paths.key }), { instanceOf: ConfigError });
  t.regex(both.message, /APP_ENCRYPTION_KEY and APP_ENCRYPTION_KEY_FILE/);
  t.false(both.message.includes('cd'.repeat(32)));
  const missing = t.throws(() => loadConfig({ DATABASE_URL_FILE: '/nonexistent/backplane/url' }), { instanceOf: ConfigError });
  t.regex(missing.message, /DATABASE_URL_FILE/);
});

test('DATABASE_URL without a password takes PGPASSWORD or PGPASSWORD_FILE; a password in the URL wins', (t) => {
  t.is(loadConfig({ DATABASE_URL: 'postgres://app@db:5432/app', PGPASSWORD: 'p@ss word' }).databaseUrl, 'postgres://app:p%40ss%20word@db:5432/app');
  const paths = secretFiles({ password: 'from-file\n' });
  const fromFile = loadConfig({
    DATABASE_URL: 'postgres://app@db:5432/app',
    DATABASE_LISTEN_URL: 'postgres://app@direct:5432/app',
    PGPASSWORD_FILE: paths.password,
  });
  t.is(fromFile.databaseUrl, 'postgres://app:from-file@db:5432/app');
  t.is(fromFile.databaseListenUrl, 'postgres://app:from-file@direct:5432/app');
  t.is(loadConfig({ DATABASE_URL: 'postgres://app:own@db:5432/app', PGPASSWORD: 'other' }).databaseUrl, 'postgres://app:own@db:5432/app');
  t.throws(() => loadConfig({ DATABASE_URL: 'postgres://app@db/app', PGPASSWORD: 'a', PGPASSWORD_FILE: paths.password }), { instanceOf: ConfigError });
});

test("a provider's client secret is read from client_secret_file, or from APP_OIDC_PROVIDERS_FILE with the whole list", (t) => {
  const paths = secretFiles({ secret: 'from-a-file\n' });
  const entry = { name: 'acme', issuer: 'https://id.example.com', client_id: 'backplane' };
  const [provider] = loadConfig({ APP_OIDC_PROVIDERS: JSON.stringify([{ ...entry, client_secret_file: paths.secret }]) }).oidcProviders;
  t.is(provider!.clientSecret, 'from-a-file');
  const both = t.throws(() => loadConfig({ APP_OIDC_PROVIDERS: JSON.stringify([{ ...entry, client_secret: 'x', client_secret_file: paths.secret }]) }), {
    instanceOf: ConfigError,
  });
  t.regex(both.message, /client_secret/);
  t.throws(() => loadConfig({ APP_OIDC_PROVIDERS: JSON.stringify([{ ...entry, client_secret_file: '/nonexistent/secret' }]) }), { instanceOf: ConfigError });
  const list = secretFiles({ list: `${JSON.stringify([{ ...entry, client_secret: 'in-the-list' }])}\n` });
  t.is(loadConfig({ APP_OIDC_PROVIDERS_FILE: list.list }).oidcProviders[0]!.clientSecret, 'in-the-list');
});

test('APP_READINESS_REQUIRES_DATABASE is off unless set to 1', (t) => {
  t.false(loadConfig({}).readinessRequiresDatabase);
  t.true(loadConfig({ APP_READINESS_REQUIRES_DATABASE: '1' }).readinessRequiresDatabase);
  t.throws(() => loadConfig({ APP_READINESS_REQUIRES_DATABASE: 'yes' }), { instanceOf: ConfigError });
});
