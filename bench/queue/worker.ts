// One worker instance of a queue under test, in its own process (workers.ts starts them):
//   node --import tsx bench/queue/worker.ts <queue under test> <job queue> <noop|latency|count>
// noop does nothing; latency measures each job's add-to-start time; count records each run in the
// bench's own table (insert … on conflict), so a job run twice is seen even when its process died.
// It reports to the parent over IPC every 100 ms: jobs started, and latencies since the last report.
import pg from 'pg';
import { loadQueue } from './queues.ts';
import { type JobPayload, epochMs } from './queueUnderTest.ts';

export type WorkerMode = 'noop' | 'latency' | 'count';

export interface WorkerReport {
  ready?: boolean;
  started: number;
  /** [job number, add-to-start ms] of the jobs started since the last report. */
  latencies: Array<[number, number]>;
}

const REPORT_EVERY_MS = 100;

const [queueName, jobQueue, mode] = process.argv.slice(2) as [string, string, WorkerMode];
const url = process.env.DATABASE_URL!;
const queue = await loadQueue(queueName);
const runs = mode === 'count' ? new pg.Pool({ connectionString: url, max: 4, application_name: 'bench-queue-runs' }) : undefined;
let started = 0;
let latencies: Array<[number, number]> = [];

async function handle(payloads: JobPayload[]): Promise<void> {
  if (mode === 'latency') {
    const now = epochMs();
    for (const payload of payloads) {
      latencies.push([payload.n, now - payload.addedAt]);
    }
  } else if (runs) {
    await runs.query(
      'insert into bench_queue_runs (queue, n, runs) select $1, n, 1 from unnest($2::int[]) as n on conflict (queue, n) do update set runs = bench_queue_runs.runs + 1',
      [jobQueue, payloads.map((payload) => payload.n)],
    );
  }
  started += payloads.length;
}

const report = (extra: Partial<WorkerReport> = {}) => {
  process.send?.({ started, latencies, ...extra } satisfies WorkerReport);
  latencies = [];
};

const consumer = await queue.startConsumer(url, jobQueue, handle);
report({ ready: true });
const timer = setInterval(report, REPORT_EVERY_MS);

let stopping = false;
const stop = async () => {
  if (stopping) {
    return;
  }
  stopping = true;
  clearInterval(timer);
  await consumer.stop();
  await runs?.end();
  process.send?.({ started, latencies } satisfies WorkerReport, () => process.exit(0));
};
process.on('SIGTERM', () => void stop());
process.on('disconnect', () => void stop());
