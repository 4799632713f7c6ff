import test from 'ava';
import { type TestCluster, runCli, startCluster, waitFor } from '../support/cluster.ts';
import { type TestDatabase, createTestDatabase } from '../support/database.ts';
import { startTestInstance } from '../support/instance.ts';
import { assertProblem } from '../support/problems.ts';
import { accountWithToken, bearer } from '../support/tokens.ts';

let db: TestDatabase;
let cluster: TestCluster | undefined;

test.before(async () => {
  db = await createTestDatabase();
});

test.after.always(async () => {
  await cluster?.stop();
  await db?.drop();
});

// A new connection per request, so the primary spreads them over its instances.
const statusOf = async (url: string, headers: Record<string, string> = {}) => (await fetch(url, { headers: { ...headers, Connection: 'close' } })).status;

test.serial('bad invocations change nothing', async (t) => {
  const env = { DATABASE_URL: db.url };
  const noReason = await runCli(['maintenance', 'on'], env);
  t.is(noReason.code, 1);
  t.regex(noReason.stderr, /setting_reason_required/);
  const badDelay = await runCli(['maintenance', 'on', '--retry-after', '30s', '--reason', 'r'], env);
  t.is(badDelay.code, 1);
  t.regex(badDelay.stderr, /invalid_setting_value/);
  t.is((await runCli(['maintenance', 'maybe', '--reason', 'r'], env)).code, 2);
  t.is((await runCli(['maintenance'], env)).code, 2);
  const { rows } = await db.pool.query(`select count(*)::int as n from settings_history`);
  t.is(rows[0].n, 0);
});

test.serial('an instance started while maintenance is on starts in maintenance', async (t) => {
  const on = await runCli(['maintenance', 'on', '--message', 'Planned upgrade', '--retry-after', '10m', '--reason', 'upgrade to v0.6'], {
    DATABASE_URL: db.url,
  });
  t.is(on.code, 0, on.stderr);
  const instance = await startTestInstance(db.url);
  try {
    const response = await fetch(`${instance.url}/products`);
    const problem = await assertProblem(t, response, 503, 'maintenance');
    t.is(problem.detail, 'Planned upgrade');
    t.is(response.headers.get('retry-after'), '600');
  } finally {
    await instance.drain();
  }
  const { rows } = await db.pool.query(
    `select resource_id, actor_kind, actor_id, actor_label, metadata->>'reason' as reason from audit_events where action = 'settings.value.changed' order by id`,
  );
  t.deepEqual(
    rows.map((row) => row.resource_id),
    ['maintenance.message', 'maintenance.retry_after', 'maintenance.enabled'],
  );
  for (const row of rows) {
    t.like(row, { actor_kind: 'system', actor_id: 'cli', actor_label: 'system:cli', reason: 'upgrade to v0.6' });
  }
  const history = await db.pool.query(`select name, actor_label from settings_history order by id`);
  t.is(history.rowCount, 3);
  t.true(history.rows.every((row) => row.actor_label === 'system:cli'));
});

test.serial('running instances follow the command; the metrics port and open routes are unaffected', async (t) => {
  const token = (await accountWithToken(db.pool, { roles: ['ops_viewer'] })).token;
  cluster = await startCluster(db.url, 2);
  for (let i = 0; i < 6; i += 1) {
    t.is(await statusOf(`${cluster.url}/products`), 503);
    t.is(await statusOf(`${cluster.url}/readyz`), 200);
    t.is(await statusOf(`${cluster.url}/ops/system`, bearer(token)), 200);
  }
  t.is(await statusOf(cluster.metricsUrl), 200);

  const off = await runCli(['maintenance', 'off', '--reason', 'upgrade done'], { DATABASE_URL: db.url });
  t.is(off.code, 0, off.stderr);
  const since = Date.now();
  // Both instances, reached over fresh connections, must have followed.
  await waitFor(
    async () => {
      const statuses = await Promise.all(Array.from({ length: 6 }, () => statusOf(`${cluster!.url}/products`)));
      return statuses.every((status) => status === 404) ? true : undefined;
    },
    5_000,
    'every instance to leave maintenance',
  );
  t.log(`instances left maintenance ${Date.now() - since} ms after the command returned`);

  t.is((await runCli(['maintenance', 'on', '--reason', 'again'], { DATABASE_URL: db.url })).code, 0);
  await waitFor(
    async () => {
      const statuses = await Promise.all(Array.from({ length: 6 }, () => statusOf(`${cluster!.url}/products`)));
      return statuses.every((status) => status === 503) ? true : undefined;
    },
    5_000,
    'every instance to enter maintenance',
  );
  t.is(await statusOf(cluster.metricsUrl), 200);
});
