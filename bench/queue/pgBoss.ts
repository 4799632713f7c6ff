// pg-boss from npm, through its public API: `work` with a batch handler, `send`, and `insert` with the
// caller's transaction passed as `db`. Settings: its documented ways to go fast: LISTEN/NOTIFY
// wake-ups (`useListenNotify` and the queue's `notify`), fetching and completing jobs in batches
// (`batchSize`), fetching again at once while batches come back full (`burstWhenBatchFull`), the
// shortest polling interval it allows (0.5 s) and more than one fetch loop a process (`localConcurrency`).
import { PgBoss } from 'pg-boss';
import { type JobPayload, type QueueUnderTest, packageVersion } from './queueUnderTest.ts';

const instance = { useListenNotify: true };
const queueOptions = { notify: true };
const work = { batchSize: 100, burstWhenBatchFull: true, pollingIntervalSeconds: 0.5, localConcurrency: 2 };

async function startBoss(url: string): Promise<PgBoss> {
  const boss = new PgBoss({ connectionString: url, ...instance });
  boss.on('error', (error: Error) => console.error(`pg-boss error: ${error.message}`));
  await boss.start();
  return boss;
}

export const pgBoss: QueueUnderTest = {
  name: 'pg-boss',
  version: packageVersion('pg-boss'),
  settings: { ...instance, queue: queueOptions, work, activeJobsExpireAfter: '15 min (expireInSeconds, their default)' },
  async install(url) {
    const boss = await startBoss(url);
    await boss.stop({ graceful: false });
  },
  async openProducer(url) {
    const boss = await startBoss(url);
    return {
      async createQueue(queue) {
        await boss.createQueue(queue, queueOptions);
      },
      async addOne(queue, payload) {
        await boss.send(queue, payload);
      },
      async addWithin(client, queue, payloads) {
        await boss.insert(
          queue,
          payloads.map((data) => ({ data })),
          { db: { executeSql: (text, values) => client.query(text, values) } },
        );
      },
      // fail() on the jobs still active: they go to retry (retryLimit 2, their default) and run again.
      async releaseHeld(client, queue) {
        const { rows } = await client.query<{ id: string }>("select id from pgboss.job where name = $1 and state = 'active'", [queue]);
        if (rows.length > 0) {
          await boss.fail(
            queue,
            rows.map((row) => row.id),
          );
        }
        return rows.length;
      },
      close: () => boss.stop({ graceful: false }),
    };
  },
  async startConsumer(url, queue, handle) {
    const boss = await startBoss(url);
    await boss.work<JobPayload>(queue, work, (jobs) => handle(jobs.map((job) => job.data)));
    return { stop: () => boss.stop({ graceful: true, timeout: 10_000 }) };
  },
  async unfinished(client, queue) {
    const { rows } = await client.query<{ waiting: number; taken: number }>(
      "select (count(*) filter (where state in ('created', 'retry')))::int as waiting, (count(*) filter (where state = 'active'))::int as taken from pgboss.job where name = $1",
      [queue],
    );
    return rows[0]!;
  },
};
