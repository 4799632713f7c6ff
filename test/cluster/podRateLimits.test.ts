import test from 'ava';
import pg from 'pg';
import { type TestCluster, startCluster, waitFor } from '../support/cluster.ts';
import { type PlainResponse, send } from '../support/forwarded.ts';
import { type StoppableDatabase, startStoppableDatabase } from '../support/stoppableDatabase.ts';

// `backplane serve` with its default APP_RATELIMIT_BATCHING=pod: the primary decides the rate limits
// of its three instances in shared statements, on one decision pool (ADR 0020, "Who sends the statement").
// The per-address limit is the default 60 a minute: one paid back a second.
const LIMIT = 60;
let server: StoppableDatabase;
let cluster: TestCluster;

test.before(async () => {
  server = await startStoppableDatabase();
  cluster = await startCluster(server.url, 3, { APP_TRUSTED_PROXIES: '127.0.0.1/32', APP_HEARTBEAT_SECONDS: '1', APP_JOB_WORKERS: '0' });
});

test.after.always(async () => {
  await cluster?.stop();
  await server?.remove();
});

const metrics = () => fetch(cluster.metricsUrl).then((response) => response.text());

/** Sum of a series' samples whose line matches every pattern. */
function sum(text: string, name: string, ...patterns: RegExp[]): number {
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) && patterns.every((pattern) => pattern.test(line)))
    .reduce((total, line) => total + Number(line.split(' ').pop()), 0);
}

/** `count` requests for one client at once, each on a new connection, so the primary spreads them over the instances. */
const flood = (client: string, count: number) =>
  Promise.all(Array.from({ length: count }, () => send(cluster.url, { path: '/auth/sign-in', forwardedFor: client })));

const admitted = (responses: PlainResponse[]) => responses.filter((response) => response.status !== 429 && response.status !== 503);

test.serial('the primary decides for every instance: a flood spread over three admits one budget, on the pod decision pool alone', async (t) => {
  const started = performance.now();
  const responses = await flood('198.51.100.31', 3 * LIMIT);
  const seconds = (performance.now() - started) / 1000;
  const text = await metrics();
  const ok = admitted(responses);
  t.true(ok.every((response) => response.status === 422));
  t.true(responses.every((response) => [422, 429].includes(response.status)));
  // One is paid back each second the flood took.
  t.true(ok.length <= LIMIT + Math.ceil(seconds));
  if (sum(text, 'backplane_ratelimit_decisions_total', /source="fallback"/) === 0) {
    t.true(ok.length >= LIMIT);
  }
  // Decided in the database through more than one instance.
  const workers = new Set(
    [...text.matchAll(/backplane_ratelimit_decisions_total\{[^}]*source="database"[^}]*worker="(\d+)"\} [1-9]/g)].map((match) => match[1]),
  );
  t.true(workers.size >= 2, [...workers].join(','));
  // The statements are the primary's: counted once, without a worker label.
  t.is(text.split('\n').filter((line) => line.startsWith('# HELP backplane_ratelimit_statement_keys ')).length, 1);
  const statements = sum(text, 'backplane_ratelimit_statement_keys_count', /limiter="auth_ip"/);
  t.true(statements >= 1);
  t.false(/backplane_ratelimit_statement_keys_count\{[^}]*worker=/.test(text));
  // Instances open no decision connection of their own; the primary at most its pool's four.
  const client = new pg.Client({ connectionString: server.url });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string; count: number }>(
      `select application_name as name, count(*)::int as count from pg_stat_activity where application_name like 'backplane-%ratelimit' group by 1`,
    );
    t.deepEqual(
      rows.map((row) => row.name),
      ['backplane-primary-ratelimit'],
    );
    t.true(rows[0]!.count <= 4);
  } finally {
    await client.end();
  }
});

test.serial('with the database stopped the instances decide alone with their shares, and go back to it once it answers', async (t) => {
  await waitFor(
    async () => (sum(await metrics(), 'backplane_ratelimit_live_instances', /worker=/) === 9 ? true : undefined),
    30_000,
    'every instance to count three',
  );
  await server.stop();
  try {
    const started = performance.now();
    const responses = await flood('198.51.100.32', 3 * LIMIT);
    // Nothing failed or hung: each instance grants floor(60 / 3) of a fresh client alone.
    t.true(responses.every((response) => [422, 429].includes(response.status)));
    t.true(admitted(responses).length <= LIMIT);
    t.true(performance.now() - started < 30_000);
    const text = await metrics();
    t.true(sum(text, 'backplane_ratelimit_decisions_total', /source="fallback"/) >= 1);
    t.true(sum(text, 'backplane_ratelimit_alone_since_seconds', /worker=/) > 0);
  } finally {
    await server.restart();
  }
  // Probes through the primary find the database again; every instance leaves the alone mode.
  await waitFor(
    async () => {
      await send(cluster.url, { path: '/auth/sign-in', forwardedFor: '198.51.100.33' });
      const text = await metrics();
      return text.includes('backplane_ratelimit_alone_since_seconds') && sum(text, 'backplane_ratelimit_alone_since_seconds', /worker=/) === 0
        ? true
        : undefined;
    },
    30_000,
    'every instance to decide in the database again',
  );
  const after = await flood('198.51.100.34', 10);
  t.true(after.every((response) => response.status === 422));
});
