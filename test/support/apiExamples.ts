// `npm run api:examples`: real requests against a real instance on a throw-away embedded
// PostgreSQL, one table row per documented operation, and their real answers written to
// api/examples.json; the OpenAPI builder puts them under each operation (issue 19). Run it again
// when a route's answer changes shape; test/app/apiExamples.test.ts fails when an example no
// longer fits its schema or an operation has none.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Secret, TOTP } from 'otpauth';
import pg from 'pg';
import { openEmbeddedDatabase } from '../../src/platform/db/embedded.ts';
import { migrateUp } from '../../src/platform/db/migrations.ts';
import { EXAMPLES_FILE, type ApiExamples } from '../../src/app/apiExamples.ts';
import { startTestInstance } from './instance.ts';
import { PUBLIC_URL, authorizeAtProvider, onInstance, startTestProvider } from './oidcProvider.ts';
import { PASSWORD, accountWithPassword } from './signIn.ts';
import { accountWithToken, bearer } from './tokens.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'backplane-examples-'));
chmodSync(dataDir, 0o755);
const server = await openEmbeddedDatabase({ dataDir, fast: true });
try {
  const pool = new pg.Pool({ connectionString: server.url, max: 2 });
  await migrateUp(pool);
  // A real OpenID provider on loopback, so the provider routes answer as they do for a person.
  const provider = await startTestProvider('corporate-sso');
  provider.addPerson('alice-7f3a', 'alice@example.com');
  const instance = await startTestInstance(server.url, { APP_OIDC_PROVIDERS: JSON.stringify([provider.entry('corporate-sso')]), APP_PUBLIC_URL: PUBLIC_URL });
  const admin = await accountWithToken(pool, { roles: ['platform_admin'] });
  const user = await accountWithPassword(pool);
  const examples: ApiExamples = {};

  /** One real request; its body and answer become the operation's examples. */
  const call = async (operation: string, path: string, options: { body?: unknown; token?: string; keepAnswer?: boolean } = {}) => {
    const [method] = operation.split(' ');
    const response = await fetch(`${instance.url}${path}`, {
      method,
      redirect: 'manual',
      headers: { ...(options.body === undefined ? {} : { 'Content-Type': 'application/json' }), ...(options.token ? bearer(options.token) : {}) },
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    });
    const text = await response.text();
    const answer = text && /json/.test(response.headers.get('content-type') ?? '') ? (JSON.parse(text) as unknown) : undefined;
    const entry = (examples[operation] ??= { responses: {} });
    if (options.body !== undefined && response.status < 300) {
      entry.request = options.body;
    }
    if (answer !== undefined && options.keepAnswer !== false) {
      entry.responses[String(response.status)] = answer;
    }
    return { status: response.status, answer: answer as Record<string, any> };
  };
  const code = (secret: string) => new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate();

  await call('GET /livez', '/livez');
  await call('GET /readyz', '/readyz');
  await call('GET /openapi.json', '/openapi.json', { keepAnswer: false });
  await call('GET /.well-known/jwks.json', '/.well-known/jwks.json');
  const token = admin.token;
  await call('GET /ops/system', '/ops/system', { token });
  const setting = (await call('GET /ops/settings/{name}', '/ops/settings/auth.login_attempts', { token })).answer;
  await call('PUT /ops/settings/{name}', '/ops/settings/auth.login_attempts', {
    token,
    body: { value: 8, reason: 'INC-123: fewer attempts during the incident', version: setting.version },
  });
  await call('PUT /ops/settings/{name}', '/ops/settings/auth.login_attempts', {
    token,
    body: { value: 12, reason: 'a stale version', version: setting.version },
  });
  await call('GET /ops/settings/{name}', '/ops/settings/no.such_setting', { token });
  await call('GET /ops/settings', '/ops/settings', { token });
  await call('GET /ops/settings/{name}/history', '/ops/settings/auth.login_attempts/history', { token });
  const job = (await call('GET /ops/jobs/definitions/{job}', '/ops/jobs/definitions/retention', { token })).answer;
  await call('PUT /ops/jobs/definitions/{job}', '/ops/jobs/definitions/retention', {
    token,
    body: { enabled: true, reason: 'CHG-42: keep retention on', version: job.version },
  });
  await call('GET /ops/jobs/definitions', '/ops/jobs/definitions', { token });
  await call('GET /ops/jobs/definitions/{job}/history', '/ops/jobs/definitions/retention/history', { token });
  await call('POST /ops/jobs/definitions/{job}/run', '/ops/jobs/definitions/ratelimit_cleanup/run', { token });
  await call('GET /ops/jobs/overview', '/ops/jobs/overview', { token });
  await call('GET /ops/jobs/runs', '/ops/jobs/runs?limit=2', { token });
  // A failed run with its attempt, as a worker records them, for the run's detail and its retry.
  const failedRun = (
    await pool.query<{ id: string }>(
      `insert into job_runs (job, trigger, queue, max_attempts, state, attempts, instance_id, started_at, finished_at, error)
       values ('retention', 'manual', 'default', 1, 'failed', 1, $1, now() - interval '2 seconds', now(), 'query_canceled: statement timeout') returning id::text`,
      [instance.id],
    )
  ).rows[0]!.id;
  await pool.query(
    `insert into job_run_attempts (run_id, attempt, instance_id, started_at, finished_at, outcome, error)
     values ($1, 1, $2, now() - interval '2 seconds', now(), 'failed', 'query_canceled: statement timeout')`,
    [failedRun, instance.id],
  );
  await call('GET /ops/jobs/runs/{id}', `/ops/jobs/runs/${failedRun}`, { token });
  await call('POST /ops/jobs/runs/{id}/retry', `/ops/jobs/runs/${failedRun}/retry`, { token, body: { reason: 'INC-77: the database is back' } });
  await call('POST /ops/jobs/runs/{id}/retry', '/ops/jobs/runs/999999/retry', { token, body: { reason: 'a run that does not exist' } });
  await call('GET /ops/ratelimits', '/ops/ratelimits?email=ada%40example.com&address=203.0.113.9', { token });
  await call('GET /ops/ratelimits', '/ops/ratelimits?email=not-an-email', { token });
  await call('DELETE /ops/ratelimits', '/ops/ratelimits?email=ada%40example.com&address=203.0.113.9', {
    token,
    body: { reason: 'INC-78: the customer called support' },
  });
  await call('GET /ops/accounts', '/ops/accounts?limit=2', { token });
  await call('POST /ops/accounts/{id}/lock', `/ops/accounts/${user.id}/lock`, { token, body: { reason: 'INC-79: credentials leaked' } });
  await call('POST /ops/accounts/{id}/unlock', `/ops/accounts/${user.id}/unlock`, { token, body: { reason: 'INC-79: password reset' } });
  await call('PUT /ops/accounts/{id}/roles/{role}', `/ops/accounts/${user.id}/roles/ops_viewer`, { token, body: { reason: 'on call this week' } });
  await call('DELETE /ops/accounts/{id}/roles/{role}', `/ops/accounts/${user.id}/roles/ops_viewer`, { token, body: { reason: 'the week is over' } });
  await call('GET /ops/releases/instances', '/ops/releases/instances', { token });
  await call('GET /ops/retention', '/ops/retention', { token });
  await call('PUT /ops/roles/{name}', '/ops/roles/support', {
    token,
    body: { permissions: ['ops.audit.read', 'ops.system.read'], reason: 'support reads the audit log' },
  });
  await call('GET /ops/roles', '/ops/roles', { token });
  await call('GET /ops/audit', '/ops/audit?limit=2', { token });
  await call('GET /ops/audit/stats', '/ops/audit/stats?group_by=action', { token });
  await call('GET /ops/system', '/ops/system');

  // A person's sign-in, two-factor set-up and its end, in the order an app performs them.
  const signedIn = (await call('POST /auth/sign-in', '/auth/sign-in', { body: { email: user.email, password: PASSWORD } })).answer;
  await call('POST /auth/sign-in', '/auth/sign-in', { body: { email: user.email, password: 'not the password' } });
  const refreshed = (await call('POST /auth/token', '/auth/token', { body: { refresh_token: signedIn.refresh_token } })).answer;
  const userToken = refreshed.access_token as string;
  await call('GET /auth/me', '/auth/me', { token: userToken });
  const totp = (await call('POST /auth/mfa/totp', '/auth/mfa/totp', { token: userToken })).answer;
  await call('POST /auth/mfa/totp/confirm', '/auth/mfa/totp/confirm', { token: userToken, body: { code: code(totp.secret) } });
  const challenge = (await call('POST /auth/sign-in', '/auth/sign-in', { body: { email: user.email, password: PASSWORD } })).answer;
  // One 30-second step later, so the code is not the one just used.
  await new Promise((resolve) => setTimeout(resolve, 30_000 - (Date.now() % 30_000) + 100));
  const mfa = (await call('POST /auth/sign-in/mfa', '/auth/sign-in/mfa', { body: { challenge_token: challenge.challenge_token, code: code(totp.secret) } }))
    .answer;
  await new Promise((resolve) => setTimeout(resolve, 30_000 - (Date.now() % 30_000) + 100));
  await call('POST /auth/mfa/recovery-codes', '/auth/mfa/recovery-codes', { token: mfa.access_token, body: { code: code(totp.secret) } });
  await new Promise((resolve) => setTimeout(resolve, 30_000 - (Date.now() % 30_000) + 100));
  await call('DELETE /auth/mfa/totp', '/auth/mfa/totp', { token: mfa.access_token, body: { code: code(totp.secret) } });
  await call('GET /auth/providers/{provider}/start', '/auth/providers/no-such-provider/start');
  const start = await fetch(`${instance.url}/auth/providers/corporate-sso/start`, { redirect: 'manual' });
  const returned = await authorizeAtProvider(start.headers.get('Location')!, 'alice-7f3a');
  const flowCookie = start.headers
    .getSetCookie()
    .find((line) => line.includes('oidc_flow='))!
    .split(';')[0]!;
  const callback = await fetch(onInstance(returned, instance.url), { headers: { Cookie: flowCookie } });
  const signedInWithProvider = (await callback.json()) as Record<string, any>;
  (examples['GET /auth/providers/{provider}/callback'] ??= { responses: {} }).responses[String(callback.status)] = signedInWithProvider;
  await call('GET /auth/providers/{provider}/callback', '/auth/providers/corporate-sso/callback?state=x&code=y');
  await call('DELETE /auth/identities/{provider}', '/auth/identities/corporate-sso', { token: mfa.access_token });
  await call('POST /auth/sign-out', '/auth/sign-out', { token: mfa.access_token, body: { refresh_token: mfa.refresh_token } });
  await call('DELETE /auth/account', '/auth/account', { token: userToken });

  writeFileSync(join(import.meta.dirname, '..', '..', EXAMPLES_FILE), `${JSON.stringify(examples, null, 2)}\n`);
  console.log(`wrote ${EXAMPLES_FILE}: ${Object.keys(examples).length} operations`);
  await instance.drain();
  await provider.stop();
  await pool.end();
} finally {
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
