// The queue bench's scenarios, each on its own job queue name and its own worker processes:
// (t) throughput of no-op jobs, (l) add-to-start latency at a steady rate, and (x) exactly once
// across killed instances plus adds in rolled-back transactions. Database CPU is the PostgreSQL
// process tree's (postmaster and backends) over the scenario, per job.
import pg from 'pg';
import { cpuMsBetween, treeCpu } from '../ratelimit/cpu.ts';
import { settleDatabase } from '../ratelimit/processes.ts';
import { type JobPayload, type Producer, type QueueUnderTest, epochMs } from './queueUnderTest.ts';
import { type WorkerGroup, startWorkers } from './workers.ts';

export interface Bench {
  queue: QueueUnderTest;
  /** The key queues.ts knows it by, which worker processes load. */
  key: string;
  url: string;
  databasePid: number;
  producer: Producer;
  /** The bench's own connection, for transactions around adds and for counting. */
  client: pg.Client;
  instances: number;
}

const ADD_BATCH = 1_000;
const DRAIN_WITHIN_MS = 120_000;
// Before each timed scenario a checkpoint pays the previous one's dirty pages; statistics are left to
// autovacuum, as in production. BENCH_SETTLE=vacuum also runs vacuum (analyze) first: statistics taken
// with no job waiting then made pg-boss's fetch take an ordered scan of its partial index, and it ran
// 253-2,917 jobs/s against 6,579-8,635 with autovacuum's statistics (bench/README.md).
const vacuumFirst = process.env.BENCH_SETTLE === 'vacuum';

async function settle(bench: Bench): Promise<void> {
  if (vacuumFirst) {
    await settleDatabase(bench.url);
  } else {
    await bench.client.query('checkpoint');
  }
}

export async function waitUntil(done: () => boolean | Promise<boolean>, withinMs: number, everyMs = 50): Promise<boolean> {
  const deadline = performance.now() + withinMs;
  while (!(await done())) {
    if (performance.now() > deadline) {
      return false;
    }
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
  return true;
}

const drained = (bench: Bench, jobQueue: string) => async () => {
  const left = await bench.queue.unfinished(bench.client, jobQueue);
  return left.waiting + left.taken === 0;
};

/** CPU µs per job of the database's process tree and of the workers' processes between two readings. */
function cpuPerJob(bench: Bench, workers: WorkerGroup, before: ReturnType<typeof treeCpu>, jobs: number) {
  const after = treeCpu([bench.databasePid, ...workers.pids()]);
  const workerMs = workers.pids().reduce((sum, pid) => sum + cpuMsBetween(before, after, pid), 0);
  return { databaseCpuUsPerJob: round((cpuMsBetween(before, after, bench.databasePid) * 1000) / jobs), workerCpuUsPerJob: round((workerMs * 1000) / jobs) };
}

const round = (value: number, digits = 1) => Number(value.toFixed(digits));

function payloads(from: number, count: number): JobPayload[] {
  const addedAt = epochMs();
  return Array.from({ length: count }, (_v, index) => ({ n: from + index, addedAt }));
}

/** `jobs` jobs added in one transaction, in statements of 1,000 (so no worker sees one before all are there). */
async function addInOneTransaction(bench: Bench, jobQueue: string, jobs: number): Promise<void> {
  await bench.client.query('begin');
  try {
    for (let from = 0; from < jobs; from += ADD_BATCH) {
      await bench.producer.addWithin(bench.client, jobQueue, payloads(from, Math.min(ADD_BATCH, jobs - from)));
    }
    await bench.client.query('commit');
  } catch (error) {
    await bench.client.query('rollback');
    throw error;
  }
}

/**
 * (t) `jobs` no-op jobs committed at once while the workers wait, then run to the last completion:
 * jobs/s from the commit until none is left unfinished; CPU from before the adds.
 */
export async function throughput(bench: Bench, jobQueue: string, jobs: number) {
  await bench.producer.createQueue(jobQueue);
  const workers = await startWorkers(bench.key, bench.url, jobQueue, 'noop', bench.instances);
  try {
    await settle(bench);
    const before = treeCpu([bench.databasePid, ...workers.pids()]);
    const adding = performance.now();
    await addInOneTransaction(bench, jobQueue, jobs);
    const committed = performance.now();
    const started = await waitUntil(() => workers.started() >= jobs, DRAIN_WITHIN_MS);
    const finished = started && (await waitUntil(drained(bench, jobQueue), DRAIN_WITHIN_MS));
    const seconds = (performance.now() - committed) / 1000;
    return {
      jobs,
      addSeconds: round((committed - adding) / 1000, 2),
      seconds: round(seconds, 2),
      jobsPerSecond: finished ? Math.round(jobs / seconds) : null,
      ...cpuPerJob(bench, workers, before, jobs),
    };
  } finally {
    await workers.stop();
  }
}

const percentile = (sorted: number[], p: number) => (sorted.length ? sorted[Math.ceil(sorted.length * p) - 1]! : NaN);

/**
 * (l) Jobs added one at a time at a steady `perSecond` for `seconds`, open loop (a job is due every
 * 1/perSecond s whatever the earlier adds are doing); each job's add-to-start time from its payload's
 * stamp, taken as its add is issued, to its handler's start, on the same clock. The first second is warm-up.
 */
export async function latency(bench: Bench, jobQueue: string, perSecond: number, seconds: number) {
  await bench.producer.createQueue(jobQueue);
  const workers = await startWorkers(bench.key, bench.url, jobQueue, 'latency', bench.instances);
  try {
    await settle(bench);
    const before = treeCpu([bench.databasePid, ...workers.pids()]);
    const total = perSecond * seconds;
    const adds: Array<Promise<void>> = [];
    let failed = 0;
    let firstError: string | undefined;
    const start = performance.now();
    await new Promise<void>((resolve) => {
      let sent = 0;
      const timer = setInterval(() => {
        while (sent < total && start + (sent * 1000) / perSecond <= performance.now()) {
          adds.push(
            bench.producer.addOne(jobQueue, { n: sent, addedAt: epochMs() }).catch((error: unknown) => {
              failed += 1;
              firstError ??= error instanceof Error ? error.message : String(error);
            }),
          );
          sent += 1;
        }
        if (sent >= total) {
          clearInterval(timer);
          resolve();
        }
      }, 1);
    });
    await Promise.all(adds);
    const addSeconds = (performance.now() - start) / 1000;
    await waitUntil(() => workers.started() >= total - failed, DRAIN_WITHIN_MS);
    await waitUntil(drained(bench, jobQueue), DRAIN_WITHIN_MS);
    const measured = workers
      .latencies()
      .filter(([n]) => n >= perSecond)
      .map(([, ms]) => ms)
      .sort((a, b) => a - b);
    return {
      perSecond,
      seconds,
      jobs: total,
      failedAdds: failed,
      firstError,
      offeredPerSecond: round(total / addSeconds),
      measured: measured.length,
      p50Ms: round(percentile(measured, 0.5), 2),
      p99Ms: round(percentile(measured, 0.99), 2),
      maxMs: round(measured.at(-1) ?? NaN, 2),
      ...cpuPerJob(bench, workers, before, total),
    };
  } finally {
    await workers.stop();
  }
}

async function countRuns(client: pg.Client, jobQueue: string, from: number, to: number) {
  const { rows } = await client.query<{ jobs: number; twice: number; extra: number }>(
    'select count(*)::int as jobs, (count(*) filter (where runs > 1))::int as twice, coalesce(sum(runs - 1), 0)::int as extra from bench_queue_runs where queue = $1 and n between $2 and $3',
    [jobQueue, from, to],
  );
  return rows[0]!;
}

/**
 * (x) `jobs` jobs added in committed batches of 1,000 while 2 workers count every run in the bench's
 * table; one worker is killed with SIGKILL (and restarted) at a third and at two thirds of the jobs
 * started. Waits until every job has run or `settleSeconds` pass with no new run; jobs a killed
 * instance still holds then are released as an operator would (releaseHeld) and it waits again. Then `rolledBack`
 * jobs, each added in a transaction that rolls back, and one committed marker job after them: once the
 * marker has run, any run of the rolled-back ones would have shown.
 */
export async function exactlyOnce(bench: Bench, jobQueue: string, jobs: number, rolledBack: number, settleSeconds: number) {
  await bench.client.query('create table if not exists bench_queue_runs (queue text, n int, runs int not null, primary key (queue, n))');
  await bench.producer.createQueue(jobQueue);
  const workers = await startWorkers(bench.key, bench.url, jobQueue, 'count', bench.instances);
  try {
    const kills: Array<{ atStarted: number; afterSeconds: number }> = [];
    const start = performance.now();
    const killer = (async () => {
      for (const share of [1 / 3, 2 / 3]) {
        await waitUntil(() => workers.started() >= jobs * share, DRAIN_WITHIN_MS, 20);
        kills.push({ atStarted: workers.started(), afterSeconds: round((performance.now() - start) / 1000, 2) });
        await workers.killAndRestart(0);
      }
    })();
    for (let from = 0; from < jobs; from += ADD_BATCH) {
      await bench.producer.addWithin(bench.client, jobQueue, payloads(from, Math.min(ADD_BATCH, jobs - from)));
    }
    await killer;
    const settle = async () => {
      let last = -1;
      let quietSince = performance.now();
      await waitUntil(
        async () => {
          const { jobs: ran } = await countRuns(bench.client, jobQueue, 0, jobs - 1);
          if (ran !== last) {
            last = ran;
            quietSince = performance.now();
          }
          return ran >= jobs || performance.now() - quietSince > settleSeconds * 1000;
        },
        DRAIN_WITHIN_MS * 2,
        500,
      );
      return { runs: await countRuns(bench.client, jobQueue, 0, jobs - 1), left: await bench.queue.unfinished(bench.client, jobQueue) };
    };
    const atEnd = await settle();
    const seconds = (performance.now() - start) / 1000;
    // Every job not held has run, so what is still held is the killed instances'.
    const released = atEnd.left.taken > 0 && bench.producer.releaseHeld ? await bench.producer.releaseHeld(bench.client, jobQueue) : 0;
    const afterRelease = released > 0 ? await settle() : atEnd;

    const marker = jobs + rolledBack;
    const addRolledBack = async (from: number, to: number) => {
      const client = new pg.Client({ connectionString: bench.url });
      await client.connect();
      try {
        for (let n = from; n < to; n += 1) {
          await client.query('begin');
          await bench.producer.addWithin(client, jobQueue, [{ n, addedAt: epochMs() }]);
          await client.query('rollback');
        }
      } finally {
        await client.end();
      }
    };
    const quarter = Math.ceil(rolledBack / 4);
    await Promise.all([0, 1, 2, 3].map((part) => addRolledBack(jobs + part * quarter, Math.min(jobs + (part + 1) * quarter, marker))));
    await bench.producer.addOne(jobQueue, { n: marker, addedAt: epochMs() });
    const markerRan = await waitUntil(async () => (await countRuns(bench.client, jobQueue, marker, marker)).jobs === 1, 60_000, 100);
    const rolledBackRuns = await countRuns(bench.client, jobQueue, jobs, marker - 1);
    return {
      jobs,
      kills,
      seconds: round(seconds, 1),
      /** When every job had run, or none had for settleSeconds: */
      lost: jobs - atEnd.runs.jobs,
      /** Jobs still taken by a worker then (a killed one's, until the queue's own timeout releases them). */
      heldAtEnd: atEnd.left.taken,
      waitingAtEnd: atEnd.left.waiting,
      duplicatedAtEnd: atEnd.runs.twice,
      /** The held jobs made runnable again by the adapter's releaseHeld (as an operator would), then settled again: */
      released,
      lostAfterRelease: jobs - afterRelease.runs.jobs,
      duplicated: afterRelease.runs.twice,
      extraRuns: afterRelease.runs.extra,
      rolledBack,
      markerRan,
      rolledBackRuns: rolledBackRuns.jobs,
    };
  } finally {
    await workers.stop();
  }
}
