import test from 'ava';
import pg from 'pg';
import type { RunningInstance } from '../../src/app/instance.ts';
import { type TestCluster, startCluster, waitFor } from '../support/cluster.ts';
import { type PlainResponse, send } from '../support/forwarded.ts';
import { startTestInstance } from '../support/instance.ts';
import { fixedRateLimits } from '../support/rateLimits.ts';
import { startStoppableDatabase } from '../support/stoppableDatabase.ts';

// Issue 30 item 8: PostgreSQL frozen within a second of start-up or of a scale-up. Whatever each
// instance has counted by then, the shares granted alone together stay within the limit; an
// instance not yet counted by every other refuses with 503 database_unavailable (ADR 0020,
// amended 2026-11-26). Heartbeats every 15 s, the default: the counts read at start stay as read.
const LIMIT = 60;
const env = { APP_TRUSTED_PROXIES: '127.0.0.1/32', APP_HEARTBEAT_SECONDS: '15', APP_JOB_WORKERS: '0' };

const admitted = (responses: PlainResponse[]) => responses.filter((response) => response.status === 422);

/** Every answer is an admission (422: no body), the client's excess (429) or the database's absence (503): never a 500. */
function everyAnswerProper(responses: PlainResponse[]): boolean {
  return responses.every(
    (response) =>
      response.status === 422 ||
      (response.status === 429 && response.body?.code === 'rate_limited') ||
      (response.status === 503 && response.body?.code === 'database_unavailable'),
  );
}

const tally = (responses: PlainResponse[]) =>
  responses.reduce<Record<number, number>>((counts, response) => ({ ...counts, [response.status]: (counts[response.status] ?? 0) + 1 }), {});

async function runningRows(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ count: number }>('select count(*)::int as count from release_instances where stopped_at is null');
    return rows[0]!.count;
  } finally {
    await client.end();
  }
}

test.serial('three instances started one after another, the database frozen at once: the cluster admits at most the limit', async (t) => {
  const server = await startStoppableDatabase();
  const instances: RunningInstance[] = [];
  try {
    // 60 an hour: nothing is paid back while the test runs, however loaded the machine.
    const rateLimits = fixedRateLimits({ auth_ip: () => ({ limit: LIMIT, periodSeconds: 3600 }) });
    // One after another, so their first beats counted 1, 2 and 3 (the case).
    for (let index = 0; index < 3; index += 1) {
      instances.push(await startTestInstance(server.url, env, { rateLimits }));
    }
    await waitFor(async () => ((await runningRows(server.url)) === 3 ? true : undefined), 10_000, 'three registered instances');
    server.freeze();
    let responses: PlainResponse[];
    try {
      responses = await Promise.all(
        Array.from({ length: 150 }, (_v, index) => send(instances[index % 3]!.url, { path: '/auth/sign-in', forwardedFor: '198.51.100.81' })),
      );
    } finally {
      server.thaw();
    }
    t.true(everyAnswerProper(responses), JSON.stringify(responses.filter((response) => ![422, 429, 503].includes(response.status)).slice(0, 3)));
    t.log(tally(responses));
    t.true(admitted(responses).length <= LIMIT, `admitted ${admitted(responses).length}`);
  } finally {
    server.thaw();
    await Promise.all(instances.map((instance) => instance.drain()));
    await server.remove();
  }
});

test.serial('a pod of two joined by a second pod of two, the database frozen at once: the four admit at most the limit', async (t) => {
  const server = await startStoppableDatabase();
  const pods: TestCluster[] = [];
  try {
    pods.push(await startCluster(server.url, 2, env));
    const metrics = await waitFor(
      async () => {
        const text = await fetch(pods[0]!.metricsUrl).then((response) => response.text());
        const counts = [...text.matchAll(/^backplane_ratelimit_live_instances\{[^}]*\} (\d+)$/gm)].map((match) => Number(match[1]));
        return counts.length === 2 && counts.every((count) => count === 2) ? counts : undefined;
      },
      60_000,
      'both instances of the first pod to count two',
    );
    t.deepEqual(metrics, [2, 2]);
    pods.push(await startCluster(server.url, 2, env));
    server.freeze();
    const started = performance.now();
    let responses: PlainResponse[];
    try {
      // Each request on a new connection, half to each pod: its primary spreads them over its instances.
      responses = await Promise.all(
        Array.from({ length: 150 }, (_v, index) => send(pods[index % 2]!.url, { path: '/auth/sign-in', forwardedFor: '198.51.100.82' })),
      );
    } finally {
      server.thaw();
    }
    // The default per-address limit, 60 a minute: one is paid back each second the flood took.
    const seconds = (performance.now() - started) / 1000;
    t.true(everyAnswerProper(responses), JSON.stringify(responses.filter((response) => ![422, 429, 503].includes(response.status)).slice(0, 3)));
    t.log(tally(responses), `${seconds.toFixed(1)} s`);
    t.true(admitted(responses).length <= LIMIT + Math.ceil(seconds), `admitted ${admitted(responses).length} in ${seconds.toFixed(1)} s`);
  } finally {
    server.thaw();
    await Promise.all(pods.map((pod) => pod.stop()));
    await server.remove();
  }
});
