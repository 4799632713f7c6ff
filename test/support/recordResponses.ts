// Loaded by ava before every test file (package.json "ava.require"): each answer a test receives
// through fetch from a local instance, for an operation api/openapi.json documents, is checked
// against the document, and what it does not declare is appended to BACKPLANE_RESPONSE_REPORT.
// test/support/run.ts fails the run when that file names anything (issue 19).
import { appendFileSync } from 'node:fs';
import { operationOf, undeclared } from './declaredResponses.ts';

const report = process.env.BACKPLANE_RESPONSE_REPORT;
const LOCAL_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

if (report) {
  const original = globalThis.fetch;
  globalThis.fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const response = await original(input, init);
    const url = new URL(input instanceof Request ? input.url : String(input));
    const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
    const operation = LOCAL_HOSTS.has(url.hostname) ? operationOf(method, url.pathname) : undefined;
    if (operation) {
      void response
        .clone()
        .text()
        .then((body) => {
          const problems = undeclared(operation, { status: response.status, headers: response.headers, body });
          appendFileSync(report, `${JSON.stringify({ operation: `${operation.method} ${operation.template}`, status: response.status, problems })}\n`);
        })
        .catch(() => undefined);
    }
    return response;
  };
}
