import test from 'ava';
import { operationOf, undeclared } from '../support/declaredResponses.ts';

// The check every answer of the suite goes through (test/support/recordResponses.ts): it must
// name what the document does not declare, and nothing else.
const json = (status: number, body: unknown, type = 'application/json', headers: Record<string, string> = {}) => ({
  status,
  headers: new Headers({ 'content-type': type, ...headers }),
  body: JSON.stringify(body),
});
const problem = (status: number, code: string) => json(status, { type: 'about:blank', title: 'x', status, code, request_id: 'r' }, 'application/problem+json');

test('operations are found by method and path template; undocumented ones are left alone', (t) => {
  t.is(operationOf('GET', '/ops/settings/auth.login_attempts')?.template, '/ops/settings/{name}');
  t.is(operationOf('PATCH', '/ops/settings/auth.login_attempts'), undefined);
  t.is(operationOf('GET', '/console'), undefined);
});

test('declared answers pass; an undeclared status, code, media type, header or body is named', (t) => {
  const setting = operationOf('GET', '/ops/settings/auth.login_attempts')!;
  t.deepEqual(undeclared(setting, problem(404, 'setting_not_found')), []);
  t.regex(undeclared(setting, problem(418, 'teapot')).join(), /status not declared/);
  t.regex(undeclared(setting, problem(404, 'job_not_found')).join(), /problem code job_not_found not declared/);
  t.regex(undeclared(setting, json(404, { code: 'setting_not_found' }, 'text/html')).join(), /content type text\/html not declared/);
  t.regex(undeclared(setting, json(200, { surprise: true })).join(), /body invalid/);
  const run = operationOf('POST', '/ops/jobs/definitions/retention/run')!;
  t.regex(
    undeclared(run, { ...problem(429, 'job_run_limited'), headers: new Headers({ 'content-type': 'application/problem+json', 'retry-after': 'soon' }) }).join(),
    /Retry-After is "soon"/,
  );
});
