// graphile-worker from npm, through its public API: `run` with a task list, `makeWorkerUtils().addJob`
// and the documented SQL function `graphile_worker.add_jobs` for adds inside the caller's transaction.
// Settings: the preset of graphile-worker's performance page (worker.graphile.org/docs/performance):
// 24 concurrent jobs a process, a pool of 25, a local queue of 500 fetched jobs, completions and
// failures batched (delay 0); prepared statements on (their default).
import { Logger, makeWorkerUtils, run, runMigrations } from 'graphile-worker';
import { type JobPayload, type QueueUnderTest, packageVersion } from './queueUnderTest.ts';

const worker = {
  concurrentJobs: 24,
  maxPoolSize: 25,
  localQueue: { size: 500 },
  completeJobBatchDelay: 0,
  failJobBatchDelay: 0,
  preparedStatements: true,
};

// Warnings and errors only: an info line per job would be the bench's cost, not the queue's.
const logger = new Logger(() => (level, message) => {
  if (level === 'error' || level === 'warning') {
    console.error(`graphile-worker ${level}: ${message}`);
  }
});

export const graphileWorker: QueueUnderTest = {
  name: 'graphile-worker',
  version: packageVersion('graphile-worker'),
  settings: { ...worker, useNodeTime: false, schema: 'graphile_worker', lockedJobsReleasedAfter: '4 h (theirs; not configurable)' },
  async install(url) {
    await runMigrations({ connectionString: url, logger });
  },
  async openProducer(url) {
    const utils = await makeWorkerUtils({ connectionString: url, logger });
    return {
      async createQueue() {},
      async addOne(queue, payload) {
        await utils.addJob(queue, payload);
      },
      async addWithin(client, queue, payloads) {
        const specs = JSON.stringify(payloads.map((payload) => ({ identifier: queue, payload })));
        await client.query('select count(*) from graphile_worker.add_jobs(array(select json_populate_recordset(null::graphile_worker.job_spec, $1::json)))', [
          specs,
        ]);
      },
      // Their documented recovery for crashed workers: forceUnlockWorkers with the dead workers' ids.
      async releaseHeld(client, queue) {
        const { rows } = await client.query<{ locked_by: string; jobs: number }>(
          'select locked_by, count(*)::int as jobs from graphile_worker.jobs where task_identifier = $1 and locked_by is not null group by locked_by',
          [queue],
        );
        await utils.forceUnlockWorkers(rows.map((row) => row.locked_by));
        return rows.reduce((sum, row) => sum + row.jobs, 0);
      },
      async close() {
        await utils.release();
      },
    };
  },
  async startConsumer(url, queue, handle) {
    const runner = await run({
      noHandleSignals: true,
      logger,
      taskList: { [queue]: (payload) => handle([payload as JobPayload]) },
      preset: { worker: { connectionString: url, ...worker } },
    });
    return { stop: () => runner.stop() };
  },
  async unfinished(client, queue) {
    const { rows } = await client.query<{ waiting: number; taken: number }>(
      'select (count(*) filter (where locked_at is null))::int as waiting, (count(*) filter (where locked_at is not null))::int as taken from graphile_worker.jobs where task_identifier = $1',
      [queue],
    );
    return rows[0]!;
  },
};
