// bench/queue (issue 47): job queues on one embedded PostgreSQL, side by side, each with 2 worker
// processes: (t) no-op jobs/s, (l) add-to-start p50/p99 at a steady 500 jobs/s, database CPU per job
// beside each, and (x) exactly once: 100,000 jobs with one instance killed (SIGKILL) twice, and
// 10,000 adds in rolled-back transactions. The anchors are graphile-worker and pg-boss from npm
// with their documented fast settings; Backplane's queue joins as one more adapter (queues.ts).
// graphile-worker 0.18 and pg-boss 12 need Node 22 or later: run it with BENCH_NODE=24.
// BENCH_QUEUES=graphile-worker,pg-boss; BENCH_JOBS=20000 (t); BENCH_SECONDS=10 and BENCH_RATE=500 (l);
// BENCH_ROUNDS=1 of (t) and (l), queues taking turns; BENCH_ONCE_JOBS=100000, BENCH_ROLLED_BACK=10000,
// BENCH_SETTLE_SECONDS=40 (x, more than pg-boss's 30 s polling backstop; BENCH_ONCE_JOBS=0 skips it); BENCH_DURABLE=1 for fsync on;
// BENCH_SETTLE=vacuum runs vacuum (analyze) before each timed scenario as well as a checkpoint.
import { availableParallelism, loadavg } from 'node:os';
import pg from 'pg';
import { median, writeResults } from '../support/harness.ts';
import { measureWakeups } from '../support/wakeups.ts';
import { benchPostgres } from '../ratelimit/postgres.ts';
import { startDatabase } from '../ratelimit/processes.ts';
import { loadQueue, queues } from './queues.ts';
import type { QueueUnderTest } from './queueUnderTest.ts';
import { type Bench, exactlyOnce, latency, throughput } from './scenarios.ts';

const names = (process.env.BENCH_QUEUES ?? Object.keys(queues).join(',')).split(',');
const jobs = Number(process.env.BENCH_JOBS ?? '20000');
const seconds = Number(process.env.BENCH_SECONDS ?? '10');
const rate = Number(process.env.BENCH_RATE ?? '500');
const rounds = Math.min(5, Number(process.env.BENCH_ROUNDS ?? '1'));
const onceJobs = Number(process.env.BENCH_ONCE_JOBS ?? '100000');
const rolledBack = Number(process.env.BENCH_ROLLED_BACK ?? '10000');
const settleSeconds = Number(process.env.BENCH_SETTLE_SECONDS ?? '40');
// fsync and synchronous commit off unless BENCH_DURABLE=1: on the bench VM a durable commit of one added
// job held the adds to 116-158/s at a steady 500/s offered, so its figures measured the disk, not the queue.
const durable = process.env.BENCH_DURABLE === '1';
const instances = 2;

const nodeMajor = Number(process.versions.node.split('.')[0]);
if (nodeMajor < 22) {
  console.error(`graphile-worker 0.18 and pg-boss 12 need Node 22 or later; this is ${process.version}: run BENCH_NODE=24 npm run bench -- queue`);
  process.exit(2);
}

const loadBefore = loadavg()
  .map((value) => value.toFixed(2))
  .join(' ');
// What one process waking another costs here, at rest (wakeups.ts): figures from machines that differ in it do not compare.
const wakeups = await measureWakeups().catch((error: unknown) => {
  console.error(`wake-up cost not measured: ${error instanceof Error ? error.message : String(error)}`);
  return undefined;
});

type Throughput = Awaited<ReturnType<typeof throughput>>;
type Latency = Awaited<ReturnType<typeof latency>>;
type Once = Awaited<ReturnType<typeof exactlyOnce>>;
interface Runs {
  queue: QueueUnderTest;
  throughput: Throughput[];
  latency: Latency[];
  once?: Once;
}

const postgres = benchPostgres();
const database = await startDatabase(durable, postgres.prefix);
const client = new pg.Client({ connectionString: database.url, application_name: 'bench-queue' });
await client.connect();
const runs: Runs[] = [];
const benches: Bench[] = [];
try {
  for (const key of names) {
    const queue = await loadQueue(key);
    await queue.install(database.url);
    const producer = await queue.openProducer(database.url);
    benches.push({ queue, key, url: database.url, databasePid: database.pid, producer, client, instances });
    runs.push({ queue, throughput: [], latency: [] });
  }
  // A warm-up of each queue, not counted: its first jobs land in tables PostgreSQL has no statistics of yet.
  for (const bench of rounds > 0 ? benches : []) {
    console.log(`${bench.queue.name} warm-up:`, await throughput(bench, 'bench_warm', Math.min(jobs, 5_000)));
  }
  for (let round = 0; round < rounds; round += 1) {
    // Queues take turns, in reversed order every other round, so the machine's drift falls on all alike.
    const order = round % 2 === 0 ? benches : [...benches].reverse();
    for (const bench of order) {
      const result = await throughput(bench, `bench_t${round}`, jobs);
      console.log(`${bench.queue.name} (t) round ${round + 1}:`, result);
      runs.find((run) => run.queue === bench.queue)!.throughput.push(result);
    }
    for (const bench of order) {
      const result = await latency(bench, `bench_l${round}`, rate, seconds);
      console.log(`${bench.queue.name} (l) round ${round + 1}:`, result);
      runs.find((run) => run.queue === bench.queue)!.latency.push(result);
    }
  }
  for (const bench of onceJobs > 0 ? benches : []) {
    // Its own job queue name: the runs table counts by it, across the queues under test.
    const result = await exactlyOnce(bench, `bench_x${benches.indexOf(bench)}`, onceJobs, rolledBack, settleSeconds);
    console.log(`${bench.queue.name} (x):`, result);
    runs.find((run) => run.queue === bench.queue)!.once = result;
  }
} finally {
  for (const bench of benches) {
    await bench.producer.close().catch(() => undefined);
  }
  await client.end();
  await database.stop();
}

const middle = (values: Array<number | null>) => {
  const known = values.filter((value): value is number => value !== null && !Number.isNaN(value));
  return known.length ? median(known) : null;
};
const table = runs.map((run) => ({
  queue: `${run.queue.name} ${run.queue.version}`,
  jobsPerSecond: middle(run.throughput.map((r) => r.jobsPerSecond)),
  databaseCpuUsPerJob: middle(run.throughput.map((r) => r.databaseCpuUsPerJob)),
  addedPerSecond: middle(run.latency.map((r) => r.offeredPerSecond)),
  p50Ms: middle(run.latency.map((r) => r.p50Ms)),
  p99Ms: middle(run.latency.map((r) => r.p99Ms)),
  databaseCpuUsPerJobSteady: middle(run.latency.map((r) => r.databaseCpuUsPerJob)),
  lost: run.once?.lost ?? null,
  heldAtEnd: run.once?.heldAtEnd ?? null,
  released: run.once?.released ?? null,
  lostAfterRelease: run.once?.lostAfterRelease ?? null,
  duplicated: run.once?.duplicated ?? null,
  rolledBackRuns: run.once?.rolledBackRuns ?? null,
  node: process.version,
}));

const show = (value: number | null) => (value === null ? '-' : String(value));
const header = [
  'queue',
  'jobs/s',
  'DB µs/job',
  'added/s',
  'p50 ms',
  'p99 ms',
  'DB µs/job',
  'lost (held)',
  'released: lost',
  'duplicated',
  'rolled-back runs',
  'node',
];
const cells = table.map((row) => [
  row.queue,
  show(row.jobsPerSecond),
  show(row.databaseCpuUsPerJob),
  show(row.addedPerSecond),
  show(row.p50Ms),
  show(row.p99Ms),
  show(row.databaseCpuUsPerJobSteady),
  row.lost === null ? '-' : `${row.lost} (${row.heldAtEnd})`,
  row.released ? `${row.released}: ${row.lostAfterRelease}` : '-',
  show(row.duplicated),
  show(row.rolledBackRuns),
  row.node,
]);
const widths = header.map((cell, column) => Math.max(cell.length, ...cells.map((row) => row[column]!.length)));
const line = (row: string[]) => row.map((cell, column) => cell.padEnd(widths[column]!)).join('  ');
if (wakeups) {
  console.log(
    `machine: a loopback round trip between two processes ${wakeups.roundTripUs} µs, ${wakeups.cpuUsPerSide} µs of CPU a side` +
      (wakeups.guestHaltPollNs === null ? '' : `; guest halt polling ${wakeups.guestHaltPollNs} ns`) +
      `; load average before ${loadBefore}`,
  );
}
console.log(
  `${instances} worker processes a queue, Node ${process.version}, PostgreSQL ${postgres.major} ${durable ? 'durable' : 'fsync off'}; ` +
    `(t) ${jobs} no-op jobs: jobs/s and DB µs/job (median of ${rounds}); (l) ${seconds} s at ${rate}/s: added/s, add-to-start p50 and p99, DB µs/job; ` +
    `(x) ${onceJobs} jobs, one instance killed twice: lost (of them held by a killed instance) at the end, held jobs released: lost then, duplicated; ${rolledBack} adds rolled back: runs`,
);
console.log(line(header));
cells.forEach((row) => console.log(line(row)));
const file = writeResults('queue', {
  when: new Date().toISOString(),
  machine: { cpus: availableParallelism(), loadBefore },
  wakeups,
  postgres: postgres.major,
  database: durable ? 'durable' : 'fsync off',
  instances,
  settings: Object.fromEntries(runs.map((run) => [run.queue.name, { version: run.queue.version, ...run.queue.settings }])),
  knobs: {
    jobs,
    seconds,
    rate,
    rounds,
    onceJobs,
    rolledBack,
    settleSeconds,
    settleBeforeScenarios: process.env.BENCH_SETTLE === 'vacuum' ? 'vacuum (analyze), checkpoint' : 'checkpoint',
  },
  table,
  runs: runs.map((run) => ({ queue: run.queue.name, throughput: run.throughput, latency: run.latency, once: run.once })),
});
console.log(`written: ${file}`);
