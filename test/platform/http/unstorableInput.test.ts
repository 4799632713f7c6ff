// The outside probe's findings (issue 14, point 5): unstorable text and bad dates anywhere in a
// request are 422 validation_failed, never a 500 with an error-level log line.
import { request } from 'node:http';
import test from 'ava';
import { useInstances } from '../../support/fixture.ts';
import { sendJson } from '../../support/http.ts';
import { PUBLIC_URL, type TestProvider, startTestProvider } from '../../support/oidcProvider.ts';
import { assertProblem } from '../../support/problems.ts';

let provider: TestProvider;
test.serial.before(async () => {
  provider = await startTestProvider('acme');
});
test.after.always(() => provider?.stop());

const app = useInstances(test, {
  env: () => ({ APP_OIDC_PROVIDERS: JSON.stringify([provider.entry('acme')]), APP_PUBLIC_URL: PUBLIC_URL }),
  accounts: { admin: { roles: ['platform_admin'] } },
});

const UNSTORABLE = { nul: 'a\u0000b', 'a lone high surrogate': 'a\uD800b', 'a lone low surrogate': '\uDC00' };

for (const [what, text] of Object.entries(UNSTORABLE)) {
  test(`sign-in with ${what} in the email or password is 422`, async (t) => {
    await assertProblem(t, await sendJson('POST', app.url('/auth/sign-in'), { email: `x${text}@example.com`, password: 'secret' }), 422, 'validation_failed');
    const body = await assertProblem(t, await sendJson('POST', app.url('/auth/sign-in'), { email: 'x@example.com', password: text }), 422, 'validation_failed');
    t.deepEqual(body.errors, [{ location: 'body.password', message: 'must not contain NUL characters or unpaired surrogates' }]);
  });

  test(`a settings change with ${what} in the value or reason is 422 and changes nothing`, async (t) => {
    const url = app.url('/ops/settings/maintenance.message');
    await assertProblem(t, await sendJson('PUT', url, { value: text, reason: 'probe' }, app.headers.admin), 422, 'validation_failed');
    await assertProblem(t, await sendJson('PUT', url, { value: 'fine', reason: text }, app.headers.admin), 422, 'validation_failed');
    const { rows } = await app.db.pool.query('select count(*)::int as n from settings_history');
    t.is(rows[0].n, 0);
  });
}

// A URL cannot carry a lone surrogate (its percent-encoding is not UTF-8 and decodes to U+FFFD): NUL is the case.
test('a provider callback with NUL in state is 422', async (t) => {
  await assertProblem(t, await fetch(app.url('/auth/providers/acme/callback?state=a%00b&code=c')), 422, 'validation_failed');
});

test('/ops/audit and /ops/audit/stats filters with NUL are 422', async (t) => {
  for (const filter of ['actor_id', 'resource_type', 'resource_id', 'request_id']) {
    for (const path of ['/ops/audit?', '/ops/audit/stats?group_by=day&']) {
      await assertProblem(t, await fetch(app.url(`${path}${filter}=a%00b`), { headers: app.headers.admin }), 422, 'validation_failed');
    }
  }
});

for (const from of ['2026-11-20', 'abc', '2026-02-30T00:00:00Z', '2026-11-20T25:00:00Z', '']) {
  test(`/ops/audit/stats and /ops/audit refuse from=${from || '(empty)'} with 422`, async (t) => {
    for (const path of ['/ops/audit/stats?group_by=day&', '/ops/audit?']) {
      const response = await fetch(app.url(`${path}from=${from}`), { headers: app.headers.admin });
      const body = await assertProblem(t, response, 422, 'validation_failed');
      t.deepEqual(
        (body.errors as Array<{ location: string }>).map((issue) => issue.location),
        ['query.from'],
      );
    }
  });
}

test('a body nested deeper than the platform allows is 422, not a stack overflow', async (t) => {
  const deep = '['.repeat(30_000) + ']'.repeat(30_000);
  const response = await fetch(app.url('/auth/sign-in'), {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: `{"email":${deep},"password":"x"}`,
  });
  await assertProblem(t, response, 422, 'validation_failed');
});

/** A GET sent with Node's client as is, for what fetch would refuse to send. */
function rawGet(path: string, headers: Record<string, string> = {}): Promise<{ status: number; type: string; body: string }> {
  const url = new URL(app.url('/'));
  return new Promise((resolve, reject) => {
    const outgoing = request({ host: url.hostname, port: url.port, path, headers, agent: false }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, type: String(response.headers['content-type']), body }));
    });
    outgoing.on('error', reject).end();
  });
}

test('a request line Node cannot parse gets a problem, not a bare status line', async (t) => {
  const answer = await rawGet('/ops/audit?x=\u00ff');
  t.is(answer.status, 400);
  t.regex(answer.type, /^application\/problem\+json/);
  t.like(JSON.parse(answer.body), { status: 400, code: 'bad_request' });
});

test('headers over the parser limit get 431 request_header_too_large as a problem', async (t) => {
  const answer = await rawGet('/livez', { 'X-Padding': 'x'.repeat(20_000) });
  t.is(answer.status, 431);
  t.regex(answer.type, /^application\/problem\+json/);
  t.like(JSON.parse(answer.body), { status: 431, code: 'request_header_too_large' });
});
