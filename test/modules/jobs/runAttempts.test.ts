import test from 'ava';
import { waitFor } from '../../support/cluster.ts';
import { useInstances } from '../../support/fixture.ts';
import { assertProblem } from '../../support/problems.ts';
import { bearer } from '../../support/tokens.ts';
import { releaseRuns } from '../../../src/modules/jobs/store/runs.ts';

const app = useInstances(test, {
  env: { APP_TEST_JOBS: '1', APP_JOB_WORKERS: '2' },
  accounts: { admin: { roles: ['platform_admin'] }, viewer: { roles: ['ops_viewer'] } },
});

const call = (method: string, path: string, token: string, body?: unknown) =>
  fetch(app.url(path), {
    method,
    headers: { ...bearer(token), ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

const finished = (id: string) =>
  waitFor(
    async () => {
      const { rows } = await app.db.pool.query<{ state: string }>('select state from job_runs where id = $1', [id]);
      return rows[0]?.state === 'failed' || rows[0]?.state === 'succeeded' ? rows[0].state : undefined;
    },
    20_000,
    `run ${id} to finish`,
  );

test.serial('a failed run lists each attempt with its instance, timings and error, and a retry queues a new run', async (t) => {
  const accepted = await call('POST', '/ops/jobs/definitions/test_fail/run', app.accounts.admin.token);
  t.is(accepted.status, 202);
  const { id } = (await accepted.json()) as { id: string };
  t.is(await finished(id), 'failed');

  const detail = await call('GET', `/ops/jobs/runs/${id}`, app.accounts.viewer.token);
  t.is(detail.status, 200);
  const body = (await detail.json()) as any;
  t.like(body.run, { id, job: 'test_fail', state: 'failed', attempts: 2 });
  t.deepEqual(
    body.attempts.map((a: any) => [a.attempt, a.outcome, a.instance_id, a.error]),
    [
      [1, 'failed', app.instance.id, 'test_job_failed: the test job fails on purpose'],
      [2, 'failed', app.instance.id, 'test_job_failed: the test job fails on purpose'],
    ],
  );
  for (const attempt of body.attempts) {
    t.true(attempt.duration_ms >= 0 && Date.parse(attempt.finished_at) >= Date.parse(attempt.started_at));
  }

  await assertProblem(t, await call('POST', `/ops/jobs/runs/${id}/retry`, app.accounts.viewer.token, { reason: 'x' }), 403, 'forbidden');
  await assertProblem(t, await call('POST', `/ops/jobs/runs/${id}/retry`, app.accounts.admin.token, { reason: '  ' }), 422, 'job_reason_required');
  const retried = await call('POST', `/ops/jobs/runs/${id}/retry`, app.accounts.admin.token, { reason: 'INC-7: the upstream is back' });
  t.is(retried.status, 202);
  const retry = (await retried.json()) as any;
  t.like(retry, { job: 'test_fail', trigger: 'manual', requested_by: app.accounts.admin.id });
  t.not(retry.id, id);
  // The new run is queued or running: a second retry is refused, not stacked.
  await assertProblem(t, await call('POST', `/ops/jobs/runs/${id}/retry`, app.accounts.admin.token, { reason: 'again' }), 429, 'job_run_limited');
  const audit = await app.db.pool.query('select resource_id, metadata from audit_events where action = $1', ['jobs.run.retried']);
  t.deepEqual(
    audit.rows.map((row) => [row.resource_id, row.metadata.retry_of, row.metadata.reason]),
    [[retry.id, id, 'INC-7: the upstream is back']],
  );
  t.is(await finished(retry.id), 'failed');
});

test.serial('only a failed run can be retried; an unknown run is 404', async (t) => {
  const accepted = await call('POST', '/ops/jobs/definitions/test_tick/run', app.accounts.admin.token);
  const tick =
    accepted.status === 202
      ? ((await accepted.json()) as { id: string }).id
      : (await app.db.pool.query(`select id::text from job_runs where job = 'test_tick' order by id desc limit 1`)).rows[0].id;
  await waitFor(
    async () => ((await app.db.pool.query(`select 1 from job_runs where id = $1 and state = 'succeeded'`, [tick])).rowCount ? true : undefined),
    20_000,
    'a tick',
  );
  await assertProblem(t, await call('POST', `/ops/jobs/runs/${tick}/retry`, app.accounts.admin.token, { reason: 'x' }), 409, 'job_run_not_failed');
  await assertProblem(t, await call('GET', '/ops/jobs/runs/999999999', app.accounts.viewer.token), 404, 'job_run_not_found');
  await assertProblem(t, await call('POST', '/ops/jobs/runs/999999999/retry', app.accounts.admin.token, { reason: 'x' }), 404, 'job_run_not_found');
  await assertProblem(t, await call('GET', '/ops/jobs/runs/abc', app.accounts.viewer.token), 422, 'validation_failed');
});

test.serial('a takeover lists the attempt it took over as lost', async (t) => {
  const run = (
    await app.db.pool.query<{ id: string }>(
      `insert into job_runs (job, trigger, queue, max_attempts, state, attempts, instance_id, started_at, lease_expires_at)
     values ('test_hold', 'manual', 'default', 3, 'running', 1, 'gone', now(), now() - interval '1 second') returning id::text`,
    )
  ).rows[0]!.id;
  await app.db.pool.query(`insert into job_run_attempts (run_id, attempt, instance_id) values ($1, 1, 'gone')`, [run]);
  await waitFor(
    async () => ((await app.db.pool.query('select 1 from job_run_attempts where run_id = $1 and attempt = 2', [run])).rowCount ? true : undefined),
    20_000,
    'the takeover',
  );
  const body = (await (await call('GET', `/ops/jobs/runs/${run}`, app.accounts.viewer.token)).json()) as any;
  t.like(body.attempts[0], { attempt: 1, instance_id: 'gone', outcome: 'lost' });
  t.like(body.attempts[1], { attempt: 2, instance_id: app.instance.id });
  t.is(await finished(run), 'succeeded');
});

test.serial('an attempt released by a stopping instance is not listed: it did not count', async (t) => {
  const run = (
    await app.db.pool.query<{ id: string }>(
      `insert into job_runs (job, trigger, queue, max_attempts, state, attempts, instance_id, started_at, lease_expires_at)
     values ('test_hold', 'manual', 'default', 3, 'running', 1, 'stopping', now(), now() + interval '1 minute') returning id::text`,
    )
  ).rows[0]!.id;
  await app.db.pool.query(`insert into job_run_attempts (run_id, attempt, instance_id) values ($1, 1, 'stopping')`, [run]);
  t.is(await releaseRuns(app.db.pool, [run], 'stopping'), 1);
  t.is((await app.db.pool.query(`select 1 from job_run_attempts where run_id = $1 and instance_id = 'stopping'`, [run])).rowCount, 0);
  t.is(await finished(run), 'succeeded');
});
