import test from 'ava';
import { useInstances } from '../../support/fixture.ts';
import { assertProblem } from '../../support/problems.ts';
import { accountWithToken, bearer } from '../../support/tokens.ts';

const app = useInstances(test, {
  env: { APP_TEST_JOBS: '1' },
  accounts: { admin: { roles: ['platform_admin'] }, viewer: { roles: ['ops_viewer'] } },
});

const put = (job: string, body: unknown, token = app.accounts.admin.token) =>
  fetch(app.url(`/ops/jobs/definitions/${job}`), {
    method: 'PUT',
    headers: { ...bearer(token), 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
const get = (path: string, token = app.accounts.viewer.token) => fetch(app.url(path), { headers: bearer(token) });
const historyCount = async (job: string) =>
  Number((await app.db.pool.query('select count(*) from job_definition_history where job = $1', [job])).rows[0].count);

test.serial('one definition reads like its entry in the list, with its version and floor; reading needs ops.jobs.read', async (t) => {
  const response = await get('/ops/jobs/definitions/retention');
  t.is(response.status, 200);
  const one = (await response.json()) as any;
  const list = (await (await get('/ops/jobs/definitions')).json()) as { definitions: any[] };
  t.deepEqual(
    one,
    list.definitions.find((definition) => definition.name === 'retention'),
  );
  t.like(one, { version: 0, min_interval_seconds: 300, schedule: '15 4 * * *' });
  await assertProblem(t, await get('/ops/jobs/definitions/no_such_job'), 404, 'job_not_found');
  await assertProblem(t, await get('/ops/jobs/definitions/no_such_job/history'), 404, 'job_not_found');
  const other = (await accountWithToken(app.db.pool, { permissions: ['ops.system.read'] })).token;
  for (const path of ['/ops/jobs/definitions/retention', '/ops/jobs/definitions/retention/history']) {
    await assertProblem(t, await fetch(app.url(path)), 401, 'unauthenticated');
    await assertProblem(t, await get(path, other), 403, 'forbidden');
  }
});

test.serial('a change with a stale version is 409 and changes nothing; with the current one it applies', async (t) => {
  const first = await put('test_hold', { enabled: false, reason: 'first operator', version: 0 });
  t.is(first.status, 200);
  t.like(await first.json(), { enabled: false, version: 1 });
  const stale = await assertProblem(
    t,
    await put('test_hold', { schedule: '@every 2h', reason: 'second operator read version 0', version: 0 }),
    409,
    'job_definition_version_conflict',
  );
  t.regex(String(stale.detail), /version 1/);
  t.like(await (await get('/ops/jobs/definitions/test_hold')).json(), { enabled: false, schedule: '0 0 1 1 *', version: 1 });
  t.is(await historyCount('test_hold'), 1);
  const current = await put('test_hold', { enabled: true, reason: 'read again, then changed', version: 1 });
  t.like(await current.json(), { enabled: true, version: 2 });
  t.like(await (await put('test_hold', { enabled: false, reason: 'no version: last write wins, as before' })).json(), { version: 3 });
  await assertProblem(t, await put('test_hold', { enabled: true, reason: 'x', version: -1 }), 422, 'validation_failed');
});

test.serial('two operators who read the same version: one change applies, the other is 409', async (t) => {
  const { version } = (await (await get('/ops/jobs/definitions/test_fail')).json()) as { version: number };
  const answers = await Promise.all([
    put('test_fail', { schedule: '@every 3h', reason: 'operator a', version }),
    put('test_fail', { schedule: '@every 4h', reason: 'operator b', version }),
  ]);
  t.deepEqual(answers.map((answer) => answer.status).sort(), [200, 409]);
  t.is(await historyCount('test_fail'), 1);
  const after = (await (await get('/ops/jobs/definitions/test_fail')).json()) as { version: number; schedule: string };
  t.is(after.version, version + 1);
  const winner = (await answers.find((answer) => answer.status === 200)!.json()) as { schedule: string };
  t.is(after.schedule, winner.schedule);
});

test.serial('the history lists changes newest first, in pages, with before and after', async (t) => {
  for (const [index, schedule] of ['@every 5h', '@every 6h', '@every 7h'].entries()) {
    t.is((await put('test_timeout', { schedule, reason: `change ${index + 1}` })).status, 200);
  }
  const first = (await (await get('/ops/jobs/definitions/test_timeout/history?limit=2')).json()) as any;
  t.deepEqual(
    first.changes.map((change: any) => change.version),
    [3, 2],
  );
  t.like(first.changes[0], {
    job: 'test_timeout',
    reason: 'change 3',
    before: { enabled: true, schedule: '@every 6h' },
    after: { enabled: true, schedule: '@every 7h' },
    actor: { id: app.accounts.admin.id, label: app.accounts.admin.email },
  });
  t.truthy(first.changes[0].request_id);
  t.false(Number.isNaN(Date.parse(first.changes[0].changed_at)));
  const second = (await (await get(`/ops/jobs/definitions/test_timeout/history?limit=2&before=${first.next_cursor}`)).json()) as any;
  t.deepEqual(
    second.changes.map((change: any) => change.version),
    [1],
  );
  t.is(second.next_cursor, undefined);
  for (const query of ['limit=0', 'limit=101', 'before=abc', 'unknown=1']) {
    await assertProblem(t, await get(`/ops/jobs/definitions/test_timeout/history?${query}`), 422, 'validation_failed');
  }
});

test.serial('a schedule that runs more often than the job allows is 422 with the bound; at the bound it applies', async (t) => {
  const refused: Array<[string, string, string]> = [
    ['retention', '@every 1s', '5m'],
    ['retention', '*/2 * * * *', '5m'],
    // 23:59 then 00:00 the next day: one minute apart, though the minutes look far apart.
    ['retention', '0,59 0,23 * * *', '5m'],
    ['ratelimit_cleanup', '@every 1m', '5m'],
    ['auth_revoke_tokens', '@every 10s', '15s'],
  ];
  for (const [job, schedule, bound] of refused) {
    const before = await historyCount(job);
    const problem = await assertProblem(t, await put(job, { schedule, reason: 'more often' }), 422, 'validation_failed');
    t.true(String(problem.detail).includes(bound), `${job} ${schedule}: ${String(problem.detail)}`);
    t.like((problem.errors as any[])[0], { location: 'body.schedule' });
    t.is(await historyCount(job), before);
  }
  t.like(await (await put('ratelimit_cleanup', { schedule: '*/5 * * * *', reason: 'at the bound' })).json(), { schedule: '*/5 * * * *' });
  t.like(await (await put('auth_revoke_tokens', { schedule: '@every 15s', reason: 'at the bound' })).json(), { schedule: '@every 15s' });
  t.like(await (await put('test_tick', { schedule: '@every 2s', reason: 'test jobs keep seconds' })).json(), { schedule: '@every 2s' });
});

test.serial('an override stored below the floor before floors existed is not followed: the code schedule is', async (t) => {
  await app.db.pool.query(`update job_definitions set schedule = '@every 1s' where name = 'retention'`);
  const definition = (await (await get('/ops/jobs/definitions/retention')).json()) as any;
  t.like(definition, { schedule: '15 4 * * *', invalid_override: true, modified: true });
  t.true(Date.parse(definition.next_run_at) - Date.now() > 60_000);
});
