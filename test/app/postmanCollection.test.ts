import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import newman from 'newman';
import { operationOf } from '../support/declaredResponses.ts';
import { useInstances } from '../support/fixture.ts';

// The committed Postman collection, run as an operator would run it (newman) against a live
// instance: every request must get a status the document declares for its operation, never a 5xx.
const app = useInstances(test, {
  count: 1,
  accounts: { admin: { roles: ['platform_admin'] } },
  // The document's sample run id (42) names a finished run, as an operator's would: GET /ops/jobs/runs/{id} reads it.
  seed: async (db) =>
    void (await db.pool.query(
      `insert into job_runs (id, job, trigger, queue, max_attempts, state, attempts, started_at, finished_at)
       overriding system value values (42, 'retention', 'manual', 'default', 1, 'succeeded', 1, now(), now())`,
    )),
});
const collection = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'api', 'postman_collection.json'), 'utf8')) as object;

interface Execution {
  item: { name: string };
  request: { method: string; url: { getPath(): string } };
  response?: { code: number };
}

type Summary = {
  run: {
    executions: Execution[];
    stats: { assertions: { total: number; failed: number } };
    failures: Array<{ source?: { name?: string }; error: { message: string } }>;
  };
};

type Collection = { item: Array<{ name: string; item: Array<{ name: string; event?: Array<{ script: { exec: string[] } }> }> }> };

/** One newman run of the whole collection, in its order, with the instance's URL and the admin's token. */
function runCollection(source: object = collection): Promise<Summary> {
  return new Promise((resolve, reject) => {
    newman.run(
      {
        collection: source,
        envVar: [
          { key: 'base_url', value: app.instances[0]!.url },
          { key: 'token', value: app.headers.admin.Authorization!.replace(/^Bearer /, '') },
        ],
        timeoutRequest: 15_000,
        reporters: [],
      },
      (error, result) => (error ? reject(error) : resolve(result as unknown as Summary)),
    );
  });
}

/** What an operator's newman run reports as failed: any failed assertion fails the suite. */
const failedAssertions = (summary: Summary) => summary.run.failures.map((failure) => `${failure.source?.name ?? '?'}: ${failure.error.message}`);

test('the requests that delete data or end the session come last, in a folder of their own, DELETE /auth/account the very last', (t) => {
  const folders = (collection as Collection).item;
  const last = folders.at(-1)!;
  t.regex(last.name, /^destructive/);
  const names = last.item.map((request) => request.name);
  t.is(names.at(-1), 'DELETE /auth/account');
  t.true(['POST /auth/sign-out', 'DELETE /auth/mfa/totp', 'DELETE /auth/identities/{provider}'].every((name) => names.includes(name)));
  const elsewhere = folders.slice(0, -1).flatMap((folder) => folder.item.map((request) => request.name));
  t.false(elsewhere.some((name) => name.startsWith('DELETE ') || name === 'POST /auth/sign-out'));
  t.true(folders.every((folder) => folder.item.every((request) => request.event?.[0]?.script.exec.join('\n').includes('pm.expect('))));
});

test.serial('newman runs the collection in its order: every request asserts a declared status and none fails', async (t) => {
  const summary = await runCollection();
  const { executions } = summary.run;
  const documented = Object.values(JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'api', 'openapi.json'), 'utf8')).paths as object);
  t.is(executions.length, documented.flatMap((methods) => Object.keys(methods as object)).length);
  t.is(summary.run.stats.assertions.total, executions.length);
  t.deepEqual(failedAssertions(summary), []);
  const statuses: string[] = [];
  for (const execution of executions) {
    const status = execution.response?.code;
    const operation = operationOf(execution.request.method, execution.request.url.getPath());
    t.truthy(operation, `${execution.item.name}: no documented operation at ${execution.request.url.getPath()}`);
    t.truthy(status, `${execution.item.name}: no response`);
    t.true(status! < 500, `${execution.item.name}: ${status}`);
    t.truthy(operation?.spec.responses[String(status)], `${execution.item.name}: ${status} is not declared`);
    // GET /ops/ratelimits names its subject in the query (email or address, neither required alone): the
    // collection leaves both for the operator to fill, and without one the answer is 400 ratelimit_subject_invalid.
    if (execution.request.method === 'GET' && execution.item.name.startsWith('GET /ops/') && execution.item.name !== 'GET /ops/ratelimits') {
      t.is(status, 200, `${execution.item.name} with the sample path values`);
    }
    statuses.push(`${execution.item.name} → ${status}`);
  }
  t.is(executions.at(-1)!.item.name, 'DELETE /auth/account');
  t.log(statuses.join('\n'));
});

test.serial('a request whose status the document does not declare is a failed assertion of the run', async (t) => {
  const health = structuredClone(collection) as Collection;
  const livez = health.item.find((folder) => folder.name === 'health')!.item.find((request) => request.name === 'GET /livez')!;
  // As if the document declared only 418 for /livez: the script the generator wrote must fail the run.
  livez.event![0]!.script.exec = livez.event![0]!.script.exec.map((line) => line.replace(/pm\.expect\(\[[^\]]*\]\)/, 'pm.expect([418])'));
  health.item = [health.item.find((folder) => folder.name === 'health')!];
  const summary = await runCollection(health);
  t.is(summary.run.stats.assertions.failed, 1);
  t.is(failedAssertions(summary).length, 1);
});
