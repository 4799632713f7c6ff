// Property-based fuzzing of every operation of the OpenAPI document: bad paths, queries, headers
// and bodies, with and without a valid token, never get a 5xx, always get a problem+json error,
// and a refused request writes no row. FUZZ_SEED replays a run; FUZZ_RUNS changes its size.
import test from 'ava';
import fc from 'fast-check';
import { renderApiFiles } from '../../src/app/apiFiles.ts';
import { useInstances } from '../support/fixture.ts';
import { PUBLIC_URL, type TestProvider, startTestProvider } from '../support/oidcProvider.ts';
import { validateProblem } from '../support/problems.ts';
import { fixedRateLimits } from '../support/rateLimits.ts';
import { accountWithToken, bearer } from '../support/tokens.ts';
import { type FuzzCase, type Operation, casesOf, operationsOf, send } from './requests.ts';

const seed = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
const runsPerOperation = Number(process.env.FUZZ_RUNS ?? 40);
// The whole file's budget, shared by the operations; a loaded machine runs fewer cases, never longer.
const BUDGET_MS = Number(process.env.FUZZ_BUDGET_MS ?? 40_000);

/** Statuses that refuse a request: it must leave every table but the allowed ones as it found them. */
const REFUSALS = new Set([400, 401, 403, 404, 405, 413, 415, 422]);
// Written on a refusal on purpose: the per-address limiter spends a token on every /auth request.
const WRITTEN_BY_ANY_REFUSAL = new Set(['ratelimit_buckets']);
// Failed sign-ins, two-factor attempts and provider callbacks are audited.
const WRITTEN_BY_AUTH_REFUSAL = new Set(['audit_events']);
// Written by the instance itself while the test runs, whatever the requests.
// The audit rollups follow audit_events (checked above) in the writer's transaction and in the audit_rollup job.
const BACKGROUND = new Set([
  'job_runs',
  'job_run_attempts',
  'job_consumers',
  'release_instances',
  'schema_migrations',
  'audit_event_rollup',
  'audit_event_rollup_daily',
  'audit_event_rollup_deltas',
]);

const operations = operationsOf(JSON.parse((await renderApiFiles())['openapi.json']!) as Parameters<typeof operationsOf>[0]);

let provider: TestProvider;
test.serial.before(async () => {
  provider = await startTestProvider('acme');
});
test.after.always(() => provider?.stop());

const app = useInstances(test, {
  // The test's own address is a trusted proxy, so fuzzed X-Forwarded-For is read, not ignored.
  env: () => ({
    APP_OIDC_PROVIDERS: JSON.stringify([provider.entry('acme')]),
    APP_PUBLIC_URL: PUBLIC_URL,
    APP_JOB_WORKERS: '0',
    APP_TRUSTED_PROXIES: '127.0.0.1,::1',
  }),
  // The fuzzer sends hundreds of /auth requests from one address within a minute.
  options: { rateLimits: fixedRateLimits({ auth_ip: () => ({ limit: 1_000_000, periodSeconds: 60 }) }) },
  accounts: { admin: { roles: ['platform_admin'] }, plain: {} },
});

const known: Record<string, string[]> = {
  provider: ['acme'],
  group_by: ['day', 'action', 'outcome'],
  from: ['2026-11-20T00:00:00Z', '2026-11-20', 'abc', '1970-01-01T00:00:00Z'],
  to: ['2026-11-21T00:00:00+01:00', '2026-11-20', '2026-02-30T00:00:00Z'],
  state: ['queued', 'running', 'succeeded', 'failed'],
  running: ['true', 'false'],
  verbose: ['1', ''],
  limit: ['1', '100', '101', '0'],
};
let countRows: () => Promise<Record<string, number>>;

test.serial.before(async () => {
  const names = async (path: string) => {
    const response = await fetch(app.url(path), { headers: app.headers.admin });
    const body = (await response.json()) as Record<string, Array<{ name: string }>>;
    return Object.values(body)
      .find(Array.isArray)!
      .map((item) => item.name);
  };
  const settings = await names('/ops/settings');
  // Maintenance on would answer every later case 503: test/modules/maintenance covers it.
  known.name = [...settings.filter((name) => name !== 'maintenance.enabled'), ...(await names('/ops/roles'))];
  known.job = await names('/ops/jobs/definitions');
  const { rows } = await app.db.pool.query<{ name: string }>(
    `select relname as name from pg_class
     where relnamespace = 'public'::regnamespace and relkind in ('r', 'p') and not relispartition order by 1`,
  );
  const tables = rows.map((row) => row.name).filter((name) => !BACKGROUND.has(name));
  const statement = `select ${tables.map((name) => `(select count(*) from ${name})::int as ${name}`).join(', ')}`;
  countRows = async () => (await app.db.pool.query<Record<string, number>>(statement)).rows[0]!;
});

// These end or change the caller's own sign-in: each case gets an account of its own.
const endsCaller = (operation: Operation) => operation.path.startsWith('/auth/') && operation.method !== 'GET';

async function authorizationFor(operation: Operation, fuzzCase: FuzzCase): Promise<string | undefined> {
  if (fuzzCase.caller === 'none') {
    return undefined;
  }
  if (fuzzCase.caller === 'garbage') {
    return fuzzCase.garbageAuthorization;
  }
  if (endsCaller(operation)) {
    return bearer((await accountWithToken(app.db.pool)).token).Authorization;
  }
  return app.headers[fuzzCase.caller].Authorization;
}

/** Why an answer breaks the rules, or undefined when it keeps them. */
function brokenRule(status: number, contentType: string, text: string): string | undefined {
  if (status >= 500) {
    return `answered ${status}`;
  }
  if (status < 400) {
    return undefined;
  }
  if (!/^application\/problem\+json/.test(contentType)) {
    return `answered ${status} as ${contentType || 'no content type'}, not problem+json`;
  }
  let problem: Record<string, unknown>;
  try {
    problem = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return `answered ${status} with a body that is not JSON`;
  }
  if (!validateProblem(problem) || problem.status !== status || typeof problem.code !== 'string') {
    return `answered ${status} with a problem off the schema: ${JSON.stringify(validateProblem.errors)}`;
  }
  return undefined;
}

function changedTables(before: Record<string, number>, after: Record<string, number>, operation: Operation): string[] {
  return Object.keys(before).filter(
    (table) =>
      before[table] !== after[table] && !WRITTEN_BY_ANY_REFUSAL.has(table) && !(operation.path.startsWith('/auth/') && WRITTEN_BY_AUTH_REFUSAL.has(table)),
  );
}

let deadline = 0;
test.serial.before(() => {
  deadline = Date.now() + BUDGET_MS;
});

for (const operation of operations) {
  test.serial(`fuzz: ${operation.method} ${operation.path} never answers 5xx, errors are problems, refusals write nothing`, async (t) => {
    const remaining = deadline - Date.now();
    const operationsLeft = operations.length - operations.indexOf(operation);
    const base = new URL(app.instance.url);
    const statuses = new Map<number, number>();
    const property = fc.asyncProperty(casesOf(operation, known), async (fuzzCase) => {
      const authorization = await authorizationFor(operation, fuzzCase);
      const before = await countRows();
      const answer = await send(base, fuzzCase, authorization);
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      const broken = brokenRule(answer.status, answer.contentType, answer.text);
      if (broken) {
        throw new Error(`${fuzzCase.method} ${fuzzCase.path} ${broken}: ${answer.text.slice(0, 300)}`);
      }
      if (REFUSALS.has(answer.status)) {
        const changed = changedTables(before, await countRows(), operation);
        if (changed.length > 0) {
          throw new Error(`${fuzzCase.method} ${fuzzCase.path} answered ${answer.status} but wrote rows to ${changed.join(', ')}`);
        }
      }
    });
    const details = await fc.check(property, {
      seed,
      numRuns: runsPerOperation,
      interruptAfterTimeLimit: Math.max(500, Math.floor(remaining / operationsLeft)),
      markInterruptAsFailure: false,
    });
    const tally = [...statuses].sort(([a], [b]) => a - b).map(([status, count]) => `${status}×${count}`);
    t.log(`${details.numRuns} cases (${tally.join(', ')}), FUZZ_SEED=${seed}`);
    if (details.failed) {
      t.fail(`FUZZ_SEED=${seed} replays this.\n${String(details.errorInstance)}\n${fc.defaultReportMessage(details)}`);
    } else {
      t.pass();
    }
  });
}
