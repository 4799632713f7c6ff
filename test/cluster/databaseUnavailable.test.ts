import { randomBytes } from 'node:crypto';
import test, { type ExecutionContext } from 'ava';
import type { RunningInstance } from '../../src/app/instance.ts';
import { createPool } from '../../src/platform/db/pool.ts';
import { waitFor } from '../support/cluster.ts';
import { startTestInstance } from '../support/instance.ts';
import { assertProblem } from '../support/problems.ts';
import { type StoppableDatabase, startStoppableDatabase } from '../support/stoppableDatabase.ts';
import { accountWithToken, bearer } from '../support/tokens.ts';

// This file stops and freezes its database on purpose, so it runs its own server rather than the shared one.
let server: StoppableDatabase;
let instance: RunningInstance;
let admin: Record<string, string>;

test.before(async () => {
  server = await startStoppableDatabase(async (pool) => {
    admin = bearer((await accountWithToken(pool, { roles: ['platform_admin'] })).token);
  });
  // A short deadline keeps the file quick; the client's own abort below is far longer.
  instance = await startTestInstance(server.url, { APP_REQUEST_DEADLINE_SECONDS: '1' });
});

test.after.always(async () => {
  // A failed test may leave the server frozen: drain and removal need it answering.
  server?.thaw();
  await instance?.drain();
  await server?.remove();
});

const CLIENT_GIVES_UP_MS = 20_000;

interface Call {
  method: string;
  path: string;
  body?: unknown;
}

const SETTING = 'maintenance.message';

/** Every route here needs PostgreSQL; the bodies are valid, so only the database can refuse them. */
const DATABASE_ROUTES: Call[] = [
  { method: 'POST', path: '/auth/sign-in', body: { email: 'nobody@example.com', password: 'not-the-password' } },
  { method: 'POST', path: '/auth/token', body: { refresh_token: randomBytes(24).toString('base64url') } },
  { method: 'GET', path: '/auth/me' },
  { method: 'PUT', path: `/ops/settings/${SETTING}`, body: { value: 'written during the outage', reason: 'outage test' } },
  { method: 'GET', path: `/ops/settings/${SETTING}/history` },
  { method: 'GET', path: '/ops/audit' },
  { method: 'GET', path: '/ops/audit/stats?group_by=action' },
  { method: 'GET', path: '/ops/jobs/overview' },
  { method: 'GET', path: '/ops/retention' },
  { method: 'GET', path: '/ops/releases/instances' },
];

/** Routes that answer from memory (or report the database's state in their body). */
const MEMORY_ROUTES = ['/livez', '/ops/system', '/ops/settings', `/ops/settings/${SETTING}`, '/.well-known/jwks.json', '/openapi.json'];

function call({ method, path, body }: Call, url = instance.url): Promise<Response> {
  return fetch(`${url}${path}`, {
    method,
    headers: { ...admin, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
    signal: AbortSignal.timeout(CLIENT_GIVES_UP_MS),
  });
}

async function assertUnavailable(t: ExecutionContext, route: Call): Promise<Response> {
  const response = await call(route);
  t.log(`${route.method} ${route.path} → ${response.status}`);
  await assertProblem(t, response, 503, 'database_unavailable');
  const retryAfter = Number(response.headers.get('retry-after'));
  t.true(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After ${response.headers.get('retry-after')}`);
  return response;
}

async function assertMemoryRoutesAnswer(t: ExecutionContext): Promise<void> {
  for (const path of MEMORY_ROUTES) {
    const response = await call({ method: 'GET', path });
    t.is(response.status, 200, path);
    await response.arrayBuffer();
  }
  // Readiness lists the outage (its own bounded probe) but stays 200: the database is every pod's, not this one's (ADR 0123).
  const verbose = await waitFor(
    async () => {
      const body = (await (await call({ method: 'GET', path: '/readyz?verbose' })).json()) as { checks: Array<{ name: string; status: string }> };
      return body.checks.some((check) => check.name === 'database' && check.status === 'error') ? body : undefined;
    },
    10_000,
    'readiness to list the database failing',
  );
  t.like(verbose, { status: 'ok' });
  const ready = await call({ method: 'GET', path: '/readyz' });
  t.is(ready.status, 200);
  t.like(await ready.json(), { status: 'ok' });
}

/** The 503 PUT left no trace: the value, the history and the audit trail are as before. */
async function assertNothingWritten(t: ExecutionContext, requestId: string): Promise<void> {
  const pool = createPool({ connectionString: server.url, max: 1, applicationName: 'test-check' });
  try {
    // Checked after recovery, so a commit that landed late would be seen; the value has changed since, its history has not.
    const value = await pool.query(`select count(*)::int as n from settings_history where name = $1 and new_value = to_jsonb($2::text)`, [
      SETTING,
      'written during the outage',
    ]);
    t.is(value.rows[0].n, 0);
    const history = await pool.query(`select count(*)::int as n from settings_history where request_id = $1`, [requestId]);
    t.is(history.rows[0].n, 0);
    const audit = await pool.query(`select count(*)::int as n from audit_events where request_id = $1`, [requestId]);
    t.is(audit.rows[0].n, 0);
  } finally {
    await pool.end();
  }
}

/**
 * Database routes answer again, writes work, and the settings cache follows a change made by hand
 * (as by another instance): its listener is back.
 */
async function assertRecovered(t: ExecutionContext, value: string): Promise<void> {
  await waitFor(
    async () => ((await call({ method: 'GET', path: '/ops/audit' })).status === 200 ? true : undefined),
    30_000,
    'the database routes to answer again',
  );
  const change = await call({ method: 'PUT', path: `/ops/settings/${SETTING}`, body: { value: `${value} (by the API)`, reason: 'after the outage' } });
  t.is(change.status, 200);
  const pool = createPool({ connectionString: server.url, max: 1, applicationName: 'test-elsewhere' });
  try {
    await pool.query(`update settings_values set value = to_jsonb($2::text), version = version + 1 where name = $1`, [SETTING, value]);
  } finally {
    await pool.end();
  }
  const read = await waitFor(
    async () => {
      const body = (await (await call({ method: 'GET', path: `/ops/settings/${SETTING}` })).json()) as { value: string };
      return body.value === value ? body : undefined;
    },
    20_000,
    'the settings cache to follow a change made elsewhere',
  );
  t.is(read.value, value);
}

test.serial('with the database stopped every database route is 503 database_unavailable, memory routes answer, nothing is written, all recovers', async (t) => {
  await server.stop();
  try {
    let putRequestId = '';
    for (const route of DATABASE_ROUTES) {
      const response = await assertUnavailable(t, route);
      if (route.method === 'PUT') {
        putRequestId = response.headers.get('x-request-id')!;
      }
    }
    await assertMemoryRoutesAnswer(t);
    await server.restart();
    await assertRecovered(t, 'back after the stop');
    await assertNothingWritten(t, putRequestId);
  } finally {
    await server.restart().catch(() => undefined);
  }
});

test.serial('with the database frozen every database route answers 503 at its deadline rather than hanging, and nothing lands after the thaw', async (t) => {
  // The pool's connections are open and idle when the server stops answering, as on a hung host.
  t.is((await call({ method: 'GET', path: '/ops/releases/instances' })).status, 200);
  server.freeze();
  let putRequestId = '';
  try {
    // Concurrently, as clients would: each is bounded by its own deadline, whoever holds the connections.
    const answers = await Promise.all(DATABASE_ROUTES.map((route) => assertUnavailable(t, route)));
    putRequestId = answers[DATABASE_ROUTES.findIndex((route) => route.method === 'PUT')]!.headers.get('x-request-id')!;
    await assertMemoryRoutesAnswer(t);
  } finally {
    server.thaw();
  }
  await assertRecovered(t, 'back after the freeze');
  await assertNothingWritten(t, putRequestId);
});

/**
 * A statement in flight at the deadline gets the 1 s grace (ADR 0070), so it ends on the bound
 * itself; the answer comes just after, rendered by the process that also runs this client: at a
 * load average of 20-25 on 2 cores, up to 0.45 s after.
 */
const RENDERING_SLACK_MS = 1_000;

// Issue 30 item 9: the limiter's wait came before the deadline started, so sign-ins answered after 2 + 5 + 1 s.
for (const { deadlineSeconds, limiterBoundMs } of [
  // The limiter's bound far beyond the deadline: the old code answered sign-ins after 10 + 2 s.
  { deadlineSeconds: 2, limiterBoundMs: 10_000 },
  // As deployed (2 s bound, a longer deadline): the limiter decides alone at 2 s, the statements end by the deadline.
  { deadlineSeconds: 3, limiterBoundMs: undefined },
]) {
  test.serial(
    `with the database frozen every route answers 503 within the deadline (${deadlineSeconds} s, limiter bound ${limiterBoundMs ?? 2_000} ms) plus 1 s of its arrival`,
    async (t) => {
      const bounded = await startTestInstance(server.url, { APP_REQUEST_DEADLINE_SECONDS: String(deadlineSeconds) }, { rateLimitTimeoutMs: limiterBoundMs });
      const routes: Call[] = [
        DATABASE_ROUTES[0]!,
        DATABASE_ROUTES[1]!,
        { method: 'POST', path: '/auth/sign-in/mfa', body: { challenge_token: randomBytes(24).toString('base64url'), code: '123456' } },
        ...DATABASE_ROUTES.filter((route) => route.path.startsWith('/ops/')),
      ];
      try {
        t.is((await fetch(`${bounded.url}/ops/releases/instances`, { headers: admin })).status, 200);
        server.freeze();
        try {
          await Promise.all(
            routes.map(async (route) => {
              const sent = performance.now();
              const response = await call(route, bounded.url);
              const elapsedMs = performance.now() - sent;
              t.log(`${route.method} ${route.path} → ${response.status} in ${Math.round(elapsedMs)} ms`);
              await assertProblem(t, response, 503, 'database_unavailable');
              t.is(response.headers.get('retry-after'), '5');
              t.true(elapsedMs <= (deadlineSeconds + 1) * 1_000 + RENDERING_SLACK_MS, `${route.method} ${route.path} took ${Math.round(elapsedMs)} ms`);
            }),
          );
        } finally {
          server.thaw();
        }
      } finally {
        await bounded.drain();
      }
    },
  );
}
