import test from 'ava';
import { createHash } from 'node:crypto';
import { RATE_LIMIT_CONNECTIONS, openRateLimitPool } from '../../src/modules/ratelimit/index.ts';
import { takeFromBuckets } from '../../src/modules/ratelimit/store.ts';
import { RETENTION_JOB } from '../../src/modules/retention/kinds.ts';
import { runCli, startCluster, waitFor } from '../support/cluster.ts';
import { type RunningInstances, useInstances } from '../support/fixture.ts';
import { send } from '../support/forwarded.ts';
import { getJson, sendJson } from '../support/http.ts';
import { type RunningPgbouncer, pgbouncerBinary, startPgbouncer } from '../support/pgbouncer.ts';
import { fixedRateLimits } from '../support/rateLimits.ts';

// Two instances whose pools reach PostgreSQL only through PgBouncer in transaction mode (ADR 0092):
// 28 client connections share 4 server connections, so consecutive transactions of one pool client
// land on different server connections, where a named statement or session setting would be lost.
const binary = pgbouncerBinary();

if ('missing' in binary) {
  test.skip(`through PgBouncer in transaction mode: skipped, ${binary.missing}`, () => undefined);
} else {
  let bouncer: RunningPgbouncer | undefined;
  const LIMIT = 20;
  const bucketKey = (text: string) => createHash('sha256').update(text).digest();
  const app: RunningInstances<'admin'> = useInstances(test, {
    count: 2,
    accounts: { admin: { roles: ['platform_admin'] } },
    seed: async (db) => {
      bouncer = await startPgbouncer(binary.path, db.url);
    },
    env: (): Record<string, string> => ({
      DATABASE_URL: bouncer!.url,
      DATABASE_POOLING: 'transaction',
      DATABASE_LISTEN_URL: app.db.url,
      APP_TRUSTED_PROXIES: '127.0.0.1/32',
    }),
    // Paid back one an hour: the file is about what the shared buckets admit, not how fast a busy machine sends.
    options: { rateLimits: fixedRateLimits({ auth_ip: () => ({ limit: LIMIT, periodSeconds: 3600 }) }), rateLimitTimeoutMs: 10_000 },
  });

  test.serial.after.always(async () => {
    await bouncer?.stop();
  });

  const fallbackDecisions = async () => {
    let total = 0;
    for (const instance of app.instances) {
      const metric = (await instance.registry.getMetricsAsJSON()).find((m) => m.name === 'backplane_ratelimit_decisions_total');
      const values = (metric?.values ?? []) as Array<{ labels: Record<string, string>; value: number }>;
      total += values.filter((value) => value.labels.source === 'fallback').reduce((sum, value) => sum + value.value, 0);
    }
    return total;
  };

  test.serial('both instances are clients of the bouncer, their limiter pools included', async (t) => {
    const clients = await bouncer!.admin<{ database: string; application_name: string }>('show clients');
    const database = new URL(app.db.url).pathname.slice(1);
    const names = clients.filter((client) => client.database === database).map((client) => client.application_name);
    for (const instance of app.instances) {
      t.true(names.includes(`backplane-${instance.id}`), `main pool of ${instance.id}`);
      t.true(names.includes(`backplane-${instance.id}-ratelimit`), `limiter pool of ${instance.id}`);
    }
  });

  test.serial('the decision statement runs unnamed: concurrent decisions over shared server connections all succeed', async (t) => {
    const pool = openRateLimitPool(bouncer!.url, 'backplane-test-ratelimit', 10_000, { pooling: 'transaction' });
    try {
      const rule = { intervalUs: 1_000_000, burst: 5 };
      for (let round = 0; round < 10; round += 1) {
        const outcomes = await Promise.all(
          Array.from({ length: RATE_LIMIT_CONNECTIONS }, (_v, index) => takeFromBuckets(pool, rule, [bucketKey(`pgbouncer-${round}-${index}`)], [1])),
        );
        t.true(outcomes.every(([outcome]) => outcome!.admitted === 1));
      }
    } finally {
      await pool.end();
    }
  });

  test.serial('a setting changed through one instance is served by the other', async (t) => {
    const [writer, reader] = app.instances;
    const response = await sendJson('PUT', `${writer!.url}/ops/settings/auth.login_attempts`, { value: 17, reason: 'through pgbouncer' }, app.headers.admin);
    t.is(response.status, 200);
    const { version } = (await response.json()) as { version: number };
    const seen = await waitFor(
      async () => {
        const { body } = await getJson<{ value: number; version: number }>(`${reader!.url}/ops/settings/auth.login_attempts`, app.headers.admin);
        return body.version === version ? body : undefined;
      },
      20_000,
      'the other instance to serve the new version',
    );
    t.is(seen.value, 17);
  });

  test.serial('the shared limiter admits exactly one budget across both instances', async (t) => {
    const client = '198.51.100.16';
    const responses = await Promise.all(
      Array.from({ length: 3 * LIMIT }, (_v, index) => send(app.instances[index % 2]!.url, { path: '/auth/sign-in', forwardedFor: client })),
    );
    const admitted = responses.filter((response) => response.status !== 429);
    t.true(admitted.length <= LIMIT);
    // Decided in the database (no decision fell back to an instance alone), it is exactly the budget.
    if ((await fallbackDecisions()) === 0) {
      t.is(admitted.length, LIMIT);
    }
    t.true(admitted.every((response) => response.status === 422));
    for (const instance of app.instances) {
      t.is((await send(instance.url, { path: '/auth/sign-in', forwardedFor: client })).status, 429);
    }
  });

  test.serial('a job run asked for through one instance runs to success, its purges on the direct connection', async (t) => {
    const accepted = await fetch(`${app.instances[1]!.url}/ops/jobs/definitions/${RETENTION_JOB}/run`, { method: 'POST', headers: app.headers.admin });
    t.is(accepted.status, 202);
    const { id } = (await accepted.json()) as { id: string };
    const run = await waitFor(
      async () => {
        const { rows } = await app.db.pool.query<{ state: string; error: unknown }>('select state, error from job_runs where id = $1', [id]);
        return rows[0] && ['succeeded', 'failed'].includes(rows[0].state) ? rows[0] : undefined;
      },
      60_000,
      'the retention run to finish',
    );
    t.is(run.state, 'succeeded', JSON.stringify(run.error));
  });

  test.serial('backplane serve through the bouncer: migrations on the direct URL, two instances ready, a clean stop', async (t) => {
    const cluster = await startCluster(bouncer!.url, 2, { DATABASE_POOLING: 'transaction', DATABASE_LISTEN_URL: app.db.url, LOG_LEVEL: 'info' });
    try {
      const ready = await fetch(`${cluster.url}/readyz?verbose`);
      t.is(ready.status, 200);
      t.regex(cluster.output(), /each instance opens at most \d+ database connections/);
    } finally {
      t.is(await cluster.stop(), 0);
    }
  });

  test.serial('transaction pooling without DATABASE_LISTEN_URL stops start-up with exit 2 naming it', async (t) => {
    const { code, stderr, stdout } = await runCli(['serve'], { DATABASE_URL: bouncer!.url, DATABASE_POOLING: 'transaction', DATABASE_LISTEN_URL: '' });
    t.is(code, 2);
    t.regex(stderr + stdout, /DATABASE_LISTEN_URL/);
  });
}
