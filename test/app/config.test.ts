import test from 'ava';
import { ConfigError, loadConfig } from '../../src/app/config.ts';

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
] as const) {
  test(`an invalid ${name} stops start-up naming the variable`, (t) => {
    const error = t.throws(() => loadConfig({ [name]: value }), { instanceOf: ConfigError });
    t.regex(error!.message, new RegExp(name));
  });
}

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

for (const value of ['0.0.0.0/0', '::/0', '10.0.0.0/8,proxy.internal', '10.0.0.0/40', '10.0.0.0/8,']) {
  test(`APP_TRUSTED_PROXIES=${value} stops start-up naming the variable`, (t) => {
    const error = t.throws(() => loadConfig({ APP_TRUSTED_PROXIES: value }), { instanceOf: ConfigError });
    t.regex(error!.message, /APP_TRUSTED_PROXIES/);
  });
}

test('APP_TRUSTED_PROXIES lists ranges; unset trusts nobody', (t) => {
  t.deepEqual(loadConfig({}).trustedProxies, []);
  t.deepEqual(
    loadConfig({ APP_TRUSTED_PROXIES: '10.0.0.0/8,127.0.0.1' }).trustedProxies.map((range) => `${range.network}/${range.prefix}`),
    ['10.0.0.0/8', '127.0.0.1/32'],
  );
});
