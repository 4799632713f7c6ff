import test from 'ava';
import type { Queryable } from '../../../src/platform/db/pool.ts';
import { selectLastRuns, selectQueueLoad } from '../../../src/modules/jobs/store/reads.ts';
import { useInstances } from '../../support/fixture.ts';
import { bearer } from '../../support/tokens.ts';

const app = useInstances(test, {
  env: { APP_TEST_JOBS: '1', APP_JOB_WORKERS: '0' },
  accounts: { viewer: { roles: ['ops_viewer'] } },
});

const get = async (path: string) => {
  const response = await fetch(app.url(path), { headers: bearer(app.accounts.viewer.token) });
  return { status: response.status, body: (await response.json()) as any };
};

// Names a statement's plan instead of running it: the store's own SQL, explained.
const explaining = (db: Queryable): Queryable & { plan: () => string } => {
  let plan = '';
  return {
    query: async (text, values) => {
      const result = await db.query(`explain (format json) ${text}`, values);
      plan = JSON.stringify(result.rows[0]);
      return { ...result, rows: [] };
    },
    plan: () => plan,
  };
};

test.serial('runs are listed in numeric id order across ids of different digit counts, in pages', async (t) => {
  // Explicit ids far above the sequence, so no run the scheduler makes can take them.
  const ids = ['90000000', '100000000', '999999999', '1000000000', '20000000000'];
  await app.db.pool.query(
    `insert into job_runs (id, job, trigger, queue, state, max_attempts, created_at)
     overriding system value
     select id, 'digit_order', 'manual', 'default', 'succeeded', 1, now() from unnest($1::bigint[]) as id`,
    [ids],
  );
  const all = await get('/ops/jobs/runs?job=digit_order&limit=10');
  t.is(all.status, 200);
  const descending = [...ids].sort((a, b) => Number(BigInt(b) - BigInt(a)));
  t.deepEqual(
    all.body.runs.map((run: { id: string }) => run.id),
    descending,
  );

  const seen: string[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 5; page += 1) {
    const { body } = await get(`/ops/jobs/runs?job=digit_order&limit=2${cursor ? `&cursor=${cursor}` : ''}`);
    seen.push(...body.runs.map((run: { id: string }) => run.id));
    cursor = body.next_cursor;
    if (!cursor) {
      break;
    }
  }
  t.deepEqual(seen, descending);
});

test.serial('the last run of a quiet job and the queue counts are read through their partial indexes', async (t) => {
  await app.db.pool.query(
    `insert into job_runs (job, trigger, queue, state, max_attempts, started_at, finished_at, created_at)
     values ('test_hold', 'manual', 'default', 'succeeded', 1, now() - interval '30 days', now() - interval '30 days', now() - interval '30 days')`,
  );
  const quiet = (await app.db.pool.query<{ id: string }>(`select max(id)::text as id from job_runs where job = 'test_hold'`)).rows[0]!.id;
  // A long newer history of another job, finished, so only the indexes keep the reads short.
  await app.db.pool.query(
    `insert into job_runs (job, trigger, queue, state, max_attempts, started_at, finished_at, created_at)
     select 'busy_job', 'manual', 'default', 'succeeded', 1, now(), now(), now() from generate_series(1, 20000)`,
  );
  await app.db.pool.query('analyze job_runs');

  const overview = await get('/ops/jobs/overview');
  t.is(overview.status, 200);
  t.is(overview.body.jobs.find((job: { name: string }) => job.name === 'test_hold').last_run.id, quiet);

  const last = explaining(app.db.pool);
  await selectLastRuns(last, ['test_hold']);
  t.regex(last.plan(), /job_runs_started_job_id_idx/);
  const load = explaining(app.db.pool);
  await selectQueueLoad(load);
  t.regex(load.plan(), /job_runs_active_queue_idx/);
});
