// bench/scale (issue 20): ops reads as data grows, each beside the statement it replaced, in the
// same run on the same data. Loads its own data with generate_series into a throw-away database:
// audit events within the last 90 days (50 actions, 10,000 actors), job runs of five busy jobs and
// one quiet one, rate-limit buckets half expired. Each read is timed BENCH_REPEAT times (3), median.
// Sizes: BENCH_AUDIT_SIZES (100000,1000000,5000000,10000000), BENCH_JOB_RUNS (1000000),
// BENCH_BUCKETS (5000000); `--quick`: 20000,200000 events, 100000 runs, 200000 buckets.
// An old statement slower than BENCH_OLD_TIMEOUT_MS (15000) is reported as a timeout.
// Goals at 10M events: every stats form over 90 days < 100 ms and within 2x of 100k; any list
// < 500 ms; last runs, queue counts and retention's ages < 50 ms at 1M runs; cleanup >= 5x faster
// per expired bucket.
import pg from 'pg';
import { auditEventsAging, createAuditQueries } from '../../src/modules/audit/index.ts';
import { selectAuditDays, selectAuditEvents, selectAuditGroups } from '../../src/modules/audit/store.ts';
import { selectJobRunsAge } from '../../src/modules/jobs/aging.ts';
import { selectLastRuns, selectQueueLoad, selectRuns } from '../../src/modules/jobs/store/reads.ts';
import { cleanupRateLimitBuckets } from '../../src/modules/ratelimit/index.ts';
import type { Queryable } from '../../src/platform/db/pool.ts';
import { startDatabase, writeResults } from '../support/harness.ts';

const quick = process.argv.includes('--quick');
const sizes = (name: string, full: string, short: string) => (process.env[name] ?? (quick ? short : full)).split(',').map(Number);
const AUDIT_SIZES = sizes('BENCH_AUDIT_SIZES', '100000,1000000,5000000,10000000', '20000,200000');
const [JOB_RUNS] = sizes('BENCH_JOB_RUNS', '1000000', '100000') as [number];
const [BUCKETS] = sizes('BENCH_BUCKETS', '5000000', '200000') as [number];
const REPEAT = Number(process.env.BENCH_REPEAT ?? '3');
const OLD_TIMEOUT_MS = Number(process.env.BENCH_OLD_TIMEOUT_MS ?? '15000');
const log = (line: string) => console.log(line);

const database = await startDatabase();
const pool = new pg.Pool({ connectionString: database.url, max: 2, application_name: 'bench' });
// pool.end() resolves before its clients' sockets close; stopping the server then reports them here.
pool.on('error', () => undefined);

/** Median milliseconds of the work, each in a transaction rolled back (so old statements may drop the new indexes). */
async function time(work: (tx: Queryable) => Promise<unknown>, timeoutMs = 30_000): Promise<number | 'timeout'> {
  const runs: number[] = [];
  for (let index = 0; index < REPEAT; index += 1) {
    const client = await pool.connect();
    try {
      await client.query('begin');
      await client.query(`select set_config('statement_timeout', $1, true)`, [String(timeoutMs)]);
      const from = performance.now();
      await work(client);
      runs.push(performance.now() - from);
    } catch (error) {
      if ((error as { code?: string }).code === '57014') {
        return 'timeout';
      }
      throw error;
    } finally {
      await client.query('rollback').catch(() => undefined);
      client.release();
    }
  }
  return runs.sort((a, b) => a - b)[Math.floor(runs.length / 2)]!;
}

const rows: Array<{ read: string; size: number; new_ms: number | 'timeout'; old_ms: number | 'timeout' }> = [];
const record = (read: string, size: number, newMs: number | 'timeout', oldMs: number | 'timeout') => {
  rows.push({ read, size, new_ms: newMs, old_ms: oldMs });
  const show = (ms: number | 'timeout') => (ms === 'timeout' ? 'timeout' : ms.toFixed(1).padStart(9));
  log(`${read.padEnd(44)} ${String(size).padStart(9)}  new ${show(newMs)} ms   old ${show(oldMs)} ms`);
};

// --- audit events ---------------------------------------------------------------------------
await pool.query(`select ensure_audit_event_partitions(now() - interval '4 months', now() + interval '1 month')`);
const queries = createAuditQueries(pool, { timeoutMs: 30_000 });
let loaded = 0;
for (const size of AUDIT_SIZES) {
  const started = performance.now();
  for (let from = loaded + 1; from <= size; from += 500_000) {
    await pool.query(
      `insert into audit_events (occurred_at, actor_kind, actor_id, action, resource_type, resource_id, outcome)
       select now() - interval '90 days' * random(), (array['account', 'service', 'system', 'anonymous'])[1 + n % 4],
              'actor-' || (n % 10000), 'app.action_' || (n % 50) || '.done', 'type_' || (n % 8), (n % 1000)::text,
              (array['success', 'failure', 'denied'])[1 + n % 3]
       from generate_series($1::int, $2::int) as n`,
      [from, Math.min(size, from + 499_999)],
    );
  }
  loaded = size;
  await pool.query('select fold_audit_event_rollup()');
  // What autovacuum does after a fold (migration 20261125000100 has it vacuum the deltas early).
  await pool.query('vacuum analyze audit_events, audit_event_rollup, audit_event_rollup_daily, audit_event_rollup_deltas');
  log(`${size.toLocaleString('en')} audit events loaded in ${((performance.now() - started) / 1000).toFixed(0)} s`);

  const to = new Date();
  const from = new Date(to.getTime() - 90 * 86_400_000);
  const week = new Date(to.getTime() - 7 * 86_400_000);
  for (const groupBy of ['action', 'resource_type'] as const) {
    record(
      `stats group_by=${groupBy}, 90 days`,
      size,
      await time(() => queries.stats({ from, to }, groupBy)),
      await time((tx) => selectAuditGroups(tx, { from, to }, groupBy, 50), OLD_TIMEOUT_MS),
    );
  }
  record(
    'stats group_by=action, 7 days',
    size,
    await time(() => queries.stats({ from: week, to }, 'action')),
    await time((tx) => selectAuditGroups(tx, { from: week, to }, 'action', 50), OLD_TIMEOUT_MS),
  );
  record(
    'stats group_by=day, 90 days',
    size,
    await time(() => queries.stats({ from, to }, 'day')),
    await time((tx) => selectAuditDays(tx, { from, to }), OLD_TIMEOUT_MS),
  );
  // An action with many events and a resource type it never has (action n % 50 = 7 only meets odd types).
  const impossible = { action: 'app.action_7.done', resourceType: 'type_2' };
  record(
    'list, filter no index serves (first page)',
    size,
    await time(() => queries.list(impossible, undefined, 50)),
    await time((tx) => selectAuditEvents(tx, impossible, undefined, 51), OLD_TIMEOUT_MS),
  );
  record(
    'list, no filter (first page)',
    size,
    await time(() => queries.list({}, undefined, 50)),
    await time((tx) => selectAuditEvents(tx, {}, undefined, 51), OLD_TIMEOUT_MS),
  );
  record(
    'list, actor filter (first page)',
    size,
    await time(() => queries.list({ actorId: 'actor-42' }, undefined, 50)),
    await time((tx) => selectAuditEvents(tx, { actorId: 'actor-42' }, undefined, 51), OLD_TIMEOUT_MS),
  );
  // /ops/retention's audit row under a 30-day retention, beside counting the expired events one by one.
  const thirtyDays = 30 * 86_400;
  record(
    'retention: audit events past 30 days',
    size,
    await time((tx) => auditEventsAging.age(tx, thirtyDays)),
    await time((tx) => tx.query(`select count(*) from audit_events where occurred_at < now() - make_interval(secs => $1)`, [thirtyDays]), OLD_TIMEOUT_MS),
  );
}

// --- job runs ---------------------------------------------------------------------------------
await pool.query(
  `insert into job_runs (job, trigger, queue, state, max_attempts, started_at, finished_at, created_at)
   values ('quiet_job', 'manual', 'default', 'succeeded', 1, now() - interval '60 days', now() - interval '60 days', now() - interval '60 days')`,
);
await pool.query(
  `insert into job_runs (job, trigger, queue, state, max_attempts, started_at, finished_at, created_at)
   select 'busy_' || (n % 5), 'manual', 'default', 'succeeded', 1, now(), now(), now() - interval '1 second' * ($1::int - n)
   from generate_series(1, $1::int) as n`,
  [JOB_RUNS],
);
await pool.query(
  `insert into job_runs (job, trigger, queue, state, max_attempts) select 'busy_' || n, 'manual', 'default', 'queued', 1 from generate_series(0, 4) as n`,
);
await pool.query('vacuum analyze job_runs');
const jobs = ['busy_0', 'busy_1', 'busy_2', 'busy_3', 'busy_4', 'quiet_job'];
const withoutNewIndexes = async (tx: Queryable) => {
  await tx.query('drop index job_runs_started_job_id_idx');
  await tx.query('drop index job_runs_active_queue_idx');
  await tx.query('drop index job_runs_finished_created_at_idx');
};
const oldLastRunsSql = `
select j.name as job, r.id::text, r.trigger, r.state, r.attempts, r.error, r.started_at, r.finished_at, r.instance_id
from unnest($1::text[]) as j(name)
join lateral (select * from job_runs r where r.job = j.name and r.started_at is not null order by r.id desc limit 1) r on true`;
record(
  'jobs: last run per job',
  JOB_RUNS,
  await time((tx) => selectLastRuns(tx, jobs)),
  await time(async (tx) => {
    await withoutNewIndexes(tx);
    await tx.query(oldLastRunsSql, [jobs]);
  }, OLD_TIMEOUT_MS),
);
record(
  'jobs: queued/running per queue',
  JOB_RUNS,
  await time((tx) => selectQueueLoad(tx)),
  await time(async (tx) => {
    await withoutNewIndexes(tx);
    await selectQueueLoad(tx);
  }, OLD_TIMEOUT_MS),
);
// /ops/retention's job runs row under a 7-day retention (about 40% of the runs past it): an exact count by created_at.
record(
  'retention: job runs past 7 days',
  JOB_RUNS,
  await time((tx) => selectJobRunsAge(tx, 7 * 86_400)),
  await time(async (tx) => {
    await withoutNewIndexes(tx);
    await selectJobRunsAge(tx, 7 * 86_400);
  }, OLD_TIMEOUT_MS),
);
record(
  'jobs: /ops/jobs/runs first page',
  JOB_RUNS,
  await time((tx) => selectRuns(tx, { job: undefined, state: undefined, beforeId: undefined, limit: 51 })),
  await time((tx) => tx.query(`select id::text, job, state from job_runs order by id desc limit 51`), OLD_TIMEOUT_MS),
);

// --- rate-limit cleanup -------------------------------------------------------------------------
const loadBuckets = () =>
  pool.query(
    `insert into ratelimit_buckets (key, tat)
     select sha256(n::text::bytea), now() + case when n % 2 = 0 then interval '1 hour' else interval '-1 hour' end
     from generate_series(1, $1::int) as n`,
    [BUCKETS],
  );
const oldPurgeBatchSql = `
with doomed as (
  select key from ratelimit_buckets where key > $1 and tat < statement_timestamp() order by key limit $2 for update skip locked
), gone as (
  delete from ratelimit_buckets bucket using doomed where bucket.key = doomed.key returning bucket.key
)
select count(*)::int as deleted, (select key from doomed order by key desc limit 1) as last_key from gone`;
const cleanup = async (work: () => Promise<number>) => {
  await pool.query('truncate ratelimit_buckets');
  await loadBuckets();
  await pool.query('vacuum analyze ratelimit_buckets');
  const from = performance.now();
  const deleted = await work();
  return { deleted, usPerBucket: ((performance.now() - from) * 1000) / deleted };
};
const oldCleanup = await cleanup(async () => {
  let after: Buffer = Buffer.alloc(0);
  let total = 0;
  for (;;) {
    const { deleted, last_key: lastKey } = (await pool.query<{ deleted: number; last_key: Buffer | null }>(oldPurgeBatchSql, [after, 10_000])).rows[0]!;
    total += deleted;
    if (!lastKey) {
      return total;
    }
    after = lastKey;
  }
});
const newCleanup = await cleanup(() => cleanupRateLimitBuckets(pool));
log(
  `ratelimit_cleanup, ${BUCKETS.toLocaleString('en')} buckets: new ${newCleanup.usPerBucket.toFixed(2)} us/expired bucket (${newCleanup.deleted}), old ${oldCleanup.usPerBucket.toFixed(2)} (${oldCleanup.deleted})`,
);

const file = writeResults(quick ? 'scale-quick' : 'scale', {
  quick,
  repeat: REPEAT,
  reads: rows,
  cleanup: { buckets: BUCKETS, new: newCleanup, old: oldCleanup },
});
log(`results: ${file}`);
await pool.end();
await database.stop();
