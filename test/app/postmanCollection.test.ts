import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import newman from 'newman';
import { operationOf } from '../support/declaredResponses.ts';
import { useInstances } from '../support/fixture.ts';

// The committed Postman collection, run as an operator would run it (newman) against a live
// instance: every request must get a status the document declares for its operation, never a 5xx.
const app = useInstances(test, { count: 1, accounts: { admin: { roles: ['platform_admin'] } } });
const collection = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'api', 'postman_collection.json'), 'utf8')) as object;

interface Execution {
  item: { name: string };
  request: { method: string; url: { getPath(): string } };
  response?: { code: number };
}

type Summary = { run: { executions: Execution[] } };

/** One newman run of the given folders, with the instance's URL and the admin's token. */
function runFolders(folders: string[]): Promise<Summary> {
  return new Promise((resolve, reject) => {
    newman.run(
      {
        collection,
        folder: folders,
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

test('newman runs the collection: every request gets a declared status, and the reads succeed', async (t) => {
  // The auth folder last: it deletes the signed-in account.
  const executions = [...(await runFolders(['health', 'meta', 'ops'])).run.executions, ...(await runFolders(['auth'])).run.executions];
  const documented = Object.values(JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'api', 'openapi.json'), 'utf8')).paths as object);
  t.is(executions.length, documented.flatMap((methods) => Object.keys(methods as object)).length);
  const statuses: string[] = [];
  for (const execution of executions) {
    const status = execution.response?.code;
    const operation = operationOf(execution.request.method, execution.request.url.getPath());
    t.truthy(operation, `${execution.item.name}: no documented operation at ${execution.request.url.getPath()}`);
    t.truthy(status, `${execution.item.name}: no response`);
    t.true(status! < 500, `${execution.item.name}: ${status}`);
    t.truthy(operation?.spec.responses[String(status)], `${execution.item.name}: ${status} is not declared`);
    if (execution.request.method === 'GET' && execution.item.name.startsWith('GET /ops/')) {
      t.is(status, 200, `${execution.item.name} with the sample path values`);
    }
    statuses.push(`${execution.item.name} → ${status}`);
  }
  t.log(statuses.join('\n'));
});
