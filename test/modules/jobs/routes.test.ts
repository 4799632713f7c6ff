import test from 'ava';
import { waitFor } from '../../support/cluster.ts';
import { useInstances } from '../../support/fixture.ts';
import { assertProblem } from '../../support/problems.ts';
import { accountWithToken, bearer } from '../../support/tokens.ts';

const app = useInstances(test, {
  env: { APP_TEST_JOBS: '1', APP_JOB_WORKERS: '2' },
  accounts: { admin: { roles: ['platform_admin'] }, viewer: { roles: ['ops_viewer'] } },
});

const call = (method: string, path: string, options: { token?: string; body?: unknown; raw?: string; type?: string } = {}) =>
  fetch(app.url(path), {
    method,
    headers: {
      ...(options.token ? bearer(options.token) : {}),
      ...(options.body !== undefined || options.raw !== undefined ? { 'Content-Type': options.type ?? 'application/json' } : {}),
    },
    ...(options.raw !== undefined ? { body: options.raw } : options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
  });

const definitionRow = async (name: string) =>
  (
    await app.db.pool.query<{ enabled: boolean | null; schedule: string | null; version: number }>(
      'select enabled, schedule, version from job_definitions where name = $1',
      [name],
    )
  ).rows[0];
const runCount = async (name: string) => Number((await app.db.pool.query('select count(*) from job_runs where job = $1', [name])).rows[0].count);
const historyCount = async (name: string) =>
  Number((await app.db.pool.query('select count(*) from job_definition_history where job = $1', [name])).rows[0].count);

test('every jobs operation checks the bearer and its permission before anything else', async (t) => {
  const routes: Array<[string, string, string]> = [
    ['GET', '/ops/jobs/overview', 'ops.jobs.read'],
    ['GET', '/ops/jobs/definitions', 'ops.jobs.read'],
    ['GET', '/ops/jobs/runs', 'ops.jobs.read'],
    ['PUT', '/ops/jobs/definitions/test_hold', 'ops.jobs.write'],
    ['POST', '/ops/jobs/definitions/test_hold/run', 'ops.jobs.run'],
  ];
  const other = (await accountWithToken(app.db.pool, { permissions: ['ops.system.read'] })).token;
  const before = { definition: await definitionRow('test_hold'), runs: await runCount('test_hold') };
  for (const [method, path] of routes) {
    await assertProblem(t, await call(method, path, { body: method === 'PUT' ? { enabled: false } : undefined }), 401, 'unauthenticated');
    await assertProblem(t, await call(method, path, { token: other, body: method === 'PUT' ? { enabled: false, reason: 'x' } : undefined }), 403, 'forbidden');
  }
  await assertProblem(
    t,
    await call('PUT', '/ops/jobs/definitions/test_hold', { token: app.accounts.viewer.token, body: { enabled: false, reason: 'x' } }),
    403,
    'forbidden',
  );
  await assertProblem(t, await call('POST', '/ops/jobs/definitions/test_hold/run', { token: app.accounts.viewer.token }), 403, 'forbidden');
  t.deepEqual(await definitionRow('test_hold'), before.definition);
  t.is(await runCount('test_hold'), before.runs);
});

test('definitions list every job in code with the configuration in force and the defaults', async (t) => {
  const response = await call('GET', '/ops/jobs/definitions', { token: app.accounts.viewer.token });
  t.is(response.status, 200);
  const { definitions } = (await response.json()) as { definitions: any[] };
  // Product jobs (auth_revoke_tokens…) are listed too; these are the test ones.
  t.deepEqual(
    definitions.map((d) => d.name).filter((name) => name.startsWith('test_')),
    ['test_tick', 'test_hold', 'test_fail', 'test_timeout'],
  );
  const tick = definitions.find((d) => d.name === 'test_tick');
  t.like(tick, { queue: 'default', timeout_seconds: 10, max_attempts: 1, enabled: true, schedule: '@every 1s', modified: false, invalid_override: false });
  t.deepEqual(tick.defaults, { enabled: true, schedule: '@every 1s' });
  t.true(Date.parse(tick.next_run_at) > Date.now() - 2_000);
});

test('malformed changes are refused with their code and change nothing', async (t) => {
  const path = '/ops/jobs/definitions/test_fail';
  const before = { definition: await definitionRow('test_fail'), history: await historyCount('test_fail') };
  const cases: Array<[Parameters<typeof call>[2], number, string]> = [
    [{ body: { enabled: false } }, 422, 'job_reason_required'],
    [{ body: { enabled: false, reason: '   ' } }, 422, 'job_reason_required'],
    [{ body: { enabled: false, reason: 'x'.repeat(501) } }, 422, 'validation_failed'],
    [{ body: { schedule: 'every so often', reason: 'tidy up' } }, 422, 'invalid_job_schedule'],
    [{ body: { schedule: '@every 0s', reason: 'tidy up' } }, 422, 'invalid_job_schedule'],
    [{ body: { schedule: 'x'.repeat(101), reason: 'tidy up' } }, 422, 'validation_failed'],
    [{ body: { enabled: 'no', reason: 'tidy up' } }, 422, 'validation_failed'],
    [{ body: { enable: false, reason: 'typo in the field name' } }, 422, 'validation_failed'],
    [{ body: { reason: 'nothing to change' } }, 422, 'validation_failed'],
    [{ body: [] }, 422, 'validation_failed'],
    [{ raw: '{"enabled": false,' }, 400, 'invalid_json'],
    [{ raw: 'enabled=false', type: 'application/x-www-form-urlencoded' }, 415, 'unsupported_media_type'],
  ];
  for (const [options, status, code] of cases) {
    const body = await assertProblem(t, await call('PUT', path, { token: app.accounts.admin.token, ...options }), status, code);
    if (code === 'validation_failed') {
      t.true(Array.isArray(body.errors) && (body.errors as unknown[]).length > 0);
      t.false(JSON.stringify(body).includes('typo'));
    }
  }
  await assertProblem(
    t,
    await call('PUT', '/ops/jobs/definitions/no_such_job', { token: app.accounts.admin.token, body: { enabled: false, reason: 'x' } }),
    404,
    'job_not_found',
  );
  await assertProblem(
    t,
    await call('PUT', '/ops/jobs/definitions/Not-A-Name', { token: app.accounts.admin.token, body: { enabled: false, reason: 'x' } }),
    422,
    'validation_failed',
  );
  t.deepEqual(await definitionRow('test_fail'), before.definition);
  t.is(await historyCount('test_fail'), before.history);
  t.is((await app.db.pool.query(`select 1 from job_definitions where name = 'no_such_job'`)).rowCount, 0);
});

test('a change is recorded with its reason and actor; a change to nothing new records nothing; null returns to the default', async (t) => {
  const path = '/ops/jobs/definitions/test_timeout';
  const changed = await call('PUT', path, { token: app.accounts.admin.token, body: { schedule: '@every 6h', reason: 'less often' } });
  t.is(changed.status, 200);
  t.like(await changed.json(), { schedule: '@every 6h', enabled: true, modified: true, version: 1, updated_by: app.accounts.admin.email });
  const again = await call('PUT', path, { token: app.accounts.admin.token, body: { schedule: '@every 6h', reason: 'same again' } });
  t.like(await again.json(), { version: 1 });
  t.is(await historyCount('test_timeout'), 1);
  const reset = await call('PUT', path, { token: app.accounts.admin.token, body: { schedule: null, reason: 'back to normal' } });
  t.like(await reset.json(), { schedule: '0 0 1 1 *', modified: false, version: 2 });
  const history = await app.db.pool.query(
    'select version, old_config, new_config, reason, actor_id, request_id, client_address from job_definition_history where job = $1 order by id',
    ['test_timeout'],
  );
  t.is(history.rowCount, 2);
  t.like(history.rows[0], {
    version: 1,
    reason: 'less often',
    actor_id: app.accounts.admin.id,
    old_config: { enabled: true, schedule: '0 0 1 1 *' },
    new_config: { enabled: true, schedule: '@every 6h' },
  });
  t.truthy(history.rows[0].request_id);
  t.truthy(history.rows[0].client_address);
  t.like(await definitionRow('test_timeout'), { enabled: null, schedule: null });
  const audit = await app.db.pool.query(
    `select actor_id, outcome, metadata from audit_events where action = 'jobs.definition.changed' and resource_id = 'test_timeout' order by id`,
  );
  t.is(audit.rowCount, 2);
  t.like(audit.rows[0], { actor_id: app.accounts.admin.id, outcome: 'success', metadata: { reason: 'less often', after: { schedule: '@every 6h' } } });
});

test.serial('run now: 202 with the queued run, 429 while it is queued or running and for a minute after, 409 when disabled', async (t) => {
  const path = '/ops/jobs/definitions/test_hold/run';
  const accepted = await call('POST', path, { token: app.accounts.admin.token });
  t.is(accepted.status, 202);
  const run = (await accepted.json()) as any;
  t.like(run, { job: 'test_hold', trigger: 'manual', slot: null, state: 'queued', attempts: 0, max_attempts: 3, requested_by: app.accounts.admin.id });
  await assertProblem(t, await call('POST', path, { token: app.accounts.admin.token }), 429, 'job_run_limited');
  await waitFor(
    async () => {
      const { rows } = await app.db.pool.query('select state from job_runs where id = $1', [run.id]);
      return rows[0].state === 'succeeded' ? true : undefined;
    },
    15_000,
    'the run to finish',
  );
  const limited = await call('POST', path, { token: app.accounts.admin.token });
  await assertProblem(t, limited, 429, 'job_run_limited');
  const retryAfter = Number(limited.headers.get('retry-after'));
  t.true(retryAfter > 0 && retryAfter <= 60);
  t.is(await runCount('test_hold'), 1);

  t.is((await call('PUT', '/ops/jobs/definitions/test_fail', { token: app.accounts.admin.token, body: { enabled: false, reason: 'pause it' } })).status, 200);
  await assertProblem(t, await call('POST', '/ops/jobs/definitions/test_fail/run', { token: app.accounts.admin.token }), 409, 'job_definition_disabled');
  await assertProblem(t, await call('POST', '/ops/jobs/definitions/no_such_job/run', { token: app.accounts.admin.token }), 404, 'job_not_found');
  t.is((await call('PUT', '/ops/jobs/definitions/test_fail', { token: app.accounts.admin.token, body: { enabled: true, reason: 'resume' } })).status, 200);
});

test.serial('a failing job retries, then fails; the overview shows its last run and lists it as failing', async (t) => {
  const accepted = await call('POST', '/ops/jobs/definitions/test_fail/run', { token: app.accounts.admin.token });
  t.is(accepted.status, 202);
  const { id } = (await accepted.json()) as { id: string };
  await waitFor(
    async () => {
      const { rows } = await app.db.pool.query('select state from job_runs where id = $1', [id]);
      return rows[0].state === 'failed' ? true : undefined;
    },
    15_000,
    'the run to fail',
  );
  const response = await call('GET', '/ops/jobs/overview', { token: app.accounts.viewer.token });
  t.is(response.status, 200);
  const overview = (await response.json()) as any;
  const fail = overview.jobs.find((job: any) => job.name === 'test_fail');
  t.like(fail.last_run, {
    id,
    state: 'failed',
    attempts: 2,
    trigger: 'manual',
    instance_id: app.instance.id,
    error: 'test_job_failed: the test job fails on purpose',
  });
  t.true(fail.last_run.duration_ms >= 0);
  t.like(fail.last_24h, { failed: 1, succeeded: 0 });
  t.deepEqual(
    overview.failing.map((job: any) => job.name),
    ['test_fail'],
  );
  const tick = overview.jobs.find((job: any) => job.name === 'test_tick');
  t.true(tick.last_24h.succeeded > 0);
  t.is(tick.enabled, true);
  t.truthy(tick.next_run_at);
  t.like(
    overview.jobs.find((job: any) => job.name === 'test_hold'),
    { enabled: true, schedule: '0 0 1 1 *' },
  );
  const queue = overview.queues.find((q: any) => q.name === 'default');
  t.deepEqual(queue.instances, [app.instance.id]);
  t.is(queue.workers, 2);
  t.true(Number.isInteger(queue.running) && Number.isInteger(queue.queued));
  t.false(Number.isNaN(Date.parse(overview.generated_at)));
});

test.serial('the overview and the run list give up after 5 s with 503 jobs_query_timeout', async (t) => {
  const blocker = await app.db.pool.connect();
  try {
    await blocker.query('begin');
    await blocker.query('lock table job_runs in access exclusive mode');
    const [overview, runs] = await Promise.all([
      call('GET', '/ops/jobs/overview', { token: app.accounts.viewer.token }),
      call('GET', '/ops/jobs/runs', { token: app.accounts.viewer.token }),
    ]);
    await assertProblem(t, overview, 503, 'jobs_query_timeout');
    await assertProblem(t, runs, 503, 'jobs_query_timeout');
  } finally {
    await blocker.query('rollback');
    blocker.release();
  }
  t.is((await call('GET', '/ops/jobs/overview', { token: app.accounts.viewer.token })).status, 200);
});

test('runs are listed newest first, by job and state, in pages', async (t) => {
  await waitFor(
    async () =>
      Number((await app.db.pool.query(`select count(*) from job_runs where job = 'test_tick' and state = 'succeeded'`)).rows[0].count) >= 3 ? true : undefined,
    10_000,
    'three ticks',
  );
  const first = (await (await call('GET', '/ops/jobs/runs?job=test_tick&state=succeeded&limit=2', { token: app.accounts.viewer.token })).json()) as any;
  t.is(first.runs.length, 2);
  t.true(first.runs.every((run: any) => run.job === 'test_tick' && run.state === 'succeeded' && run.trigger === 'schedule'));
  t.true(Number(first.runs[0].id) > Number(first.runs[1].id));
  t.truthy(first.next_cursor);
  const second = (await (
    await call('GET', `/ops/jobs/runs?job=test_tick&state=succeeded&limit=2&cursor=${first.next_cursor}`, { token: app.accounts.viewer.token })
  ).json()) as any;
  t.true(Number(second.runs[0].id) < Number(first.runs[1].id));
  for (const query of ['state=done', 'limit=0', 'limit=201', 'cursor=abc', 'job=Bad-Name', 'unknown=1']) {
    await assertProblem(t, await call('GET', `/ops/jobs/runs?${query}`, { token: app.accounts.viewer.token }), 422, 'validation_failed');
  }
  const none = (await (await call('GET', '/ops/jobs/runs?job=not_a_job_here', { token: app.accounts.viewer.token })).json()) as any;
  t.deepEqual(none, { runs: [] });
});

test("GET /ops/system reports this instance's workers and the queues they consume", async (t) => {
  const body = (await (await call('GET', '/ops/system', { token: app.accounts.viewer.token })).json()) as any;
  t.deepEqual(body.jobs, { workers: 2, queues: ['default'] });
});
