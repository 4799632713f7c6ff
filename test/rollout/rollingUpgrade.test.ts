import { execFile } from 'node:child_process';
import test from 'ava';
import { migrationStatus } from '../../src/platform/db/migrations.ts';
import { sleep } from '../../src/platform/time.ts';
import { type TestCluster, runCli, startCluster } from '../support/cluster.ts';
import { createTestDatabase } from '../support/database.ts';
import { send } from '../support/forwarded.ts';
import { TEST_ENCRYPTION_KEY } from '../support/instance.ts';
import { PREVIOUS_RELEASE, previousReleaseCli } from '../support/previousRelease.ts';

// Both releases: the test jobs (an every-second tick), the sign-in budget keyed by X-Forwarded-For.
const ENV = { APP_TEST_JOBS: '1', APP_JOB_LEASE_SECONDS: '2', APP_HEARTBEAT_SECONDS: '1', APP_TRUSTED_PROXIES: '127.0.0.1/32' };
// auth_login's default in both releases: 10 attempts per email and network in 15 minutes, shared
// by every instance; it pays back one in 90 s, so the count is exact however slow the machine.
const SIGN_IN_BUDGET = 10;
const MAX_REQUESTS = 50_000;

function runPrevious(cli: string, args: string[], env: Record<string, string>): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', cli, ...args],
      { env: { ...process.env, LOG_LEVEL: 'warn', APP_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY, ...env } },
      (error, stdout, stderr) => resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, output: stdout + stderr }),
    );
  });
}

/** Requests round-robin over the endpoints a Service would route to, as a bounded loopback client. */
function loadLoop(endpoints: string[]) {
  const failures: string[] = [];
  let sent = 0;
  let running = true;
  const client = async () => {
    while (running && sent < MAX_REQUESTS) {
      const url = endpoints[sent++ % endpoints.length]!;
      try {
        const response = await fetch(`${url}/readyz`);
        await response.arrayBuffer();
        if (response.status !== 200) {
          failures.push(`${url}: ${response.status}`);
        }
      } catch (error) {
        failures.push(`${url}: ${(error as Error).message}`);
      }
    }
  };
  const clients = [client(), client()];
  return {
    failures,
    sent: () => sent,
    async stop() {
      running = false;
      await Promise.all(clients);
    },
  };
}

test('a rolling upgrade from the previous release: both serve one database through the switch with 0 failed requests, the sign-in budget exact, one job run per slot', async (t) => {
  const started = Date.now();
  const previousCli = previousReleaseCli();
  t.log(`previous release ${PREVIOUS_RELEASE.slice(0, 12)} extracted in ${Date.now() - started} ms`);
  const db = await createTestDatabase({ migrated: false });
  let previous: TestCluster | undefined;
  let current: TestCluster | undefined;
  try {
    const installed = await runPrevious(previousCli, ['migrate', 'up'], { DATABASE_URL: db.url });
    t.is(installed.code, 0, installed.output);
    t.true((await migrationStatus(db.pool)).pending > 0);
    previous = await startCluster(db.url, 1, ENV, previousCli);
    const endpoints = [previous.url];
    const load = loadLoop(endpoints);
    const switchStarted = new Date();

    // This release's migrations, as the migrate Job applies them while the previous release serves.
    const migrated = await runCli(['migrate', 'up'], { DATABASE_URL: db.url });
    t.is(migrated.code, 0, migrated.stderr);
    t.is((await migrationStatus(db.pool)).pending, 0);
    current = await startCluster(db.url, 1, { ...ENV, APP_MIGRATIONS: 'wait' });
    endpoints.push(current.url);

    // Both releases at once: sign-in attempts for one email, alternating, admitted exactly the budget.
    const attempts = await Promise.all(
      Array.from({ length: SIGN_IN_BUDGET * 2 }, (_v, index) =>
        send([previous!.url, current!.url][index % 2]!, {
          path: '/auth/sign-in',
          forwardedFor: '198.51.100.32',
          body: { email: 'nobody@example.com', password: 'not the password' },
        }),
      ),
    );
    t.is(attempts.filter((response) => response.status !== 429).length, SIGN_IN_BUDGET, attempts.map((response) => response.status).join(','));
    t.true(attempts.filter((response) => response.status !== 429).every((response) => response.status === 401));
    t.true(attempts.filter((response) => response.status === 429).every((response) => response.body?.code === 'too_many_attempts'));
    await sleep(3_000);

    // Drained as Kubernetes does: out of the endpoints first (preStop), then SIGTERM.
    endpoints.splice(endpoints.indexOf(previous.url), 1);
    await sleep(500);
    t.is(await previous.stop(), 0);
    await sleep(1_000);
    await load.stop();
    t.deepEqual(load.failures, []);
    t.true(load.sent() > 100, `only ${load.sent()} requests`);

    // Every slot of the every-second job ran at most once across both releases.
    const { rows } = await db.pool.query<{ slots: number; doubled: number }>(
      `select count(*)::int as slots, count(*) filter (where runs > 1)::int as doubled
         from (select slot, count(*) as runs from job_runs where job = 'test_tick' and slot >= $1 group by slot) as s`,
      [switchStarted],
    );
    t.true(rows[0]!.slots > 0);
    t.is(rows[0]!.doubled, 0);
    t.log(`${load.sent()} requests, ${rows[0]!.slots} job slots through the switch; test ${Date.now() - started} ms`);
  } finally {
    await previous?.stop();
    await current?.stop();
    await db.drop();
  }
});
