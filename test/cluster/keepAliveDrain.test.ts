import test from 'ava';
import { Agent, request } from 'node:http';
import { startCluster } from '../support/cluster.ts';
import { type TestDatabase, createTestDatabase } from '../support/database.ts';

const CLIENTS = 20;
const MAX_REQUESTS_PER_CLIENT = 20_000;
const MAX_LOAD_MS = 60_000;

interface Sent {
  at: number;
  error?: string;
}

let db: TestDatabase;

test.before(async () => {
  db = await createTestDatabase();
});

test.after.always(async () => {
  await db?.drop();
});

const get = (agent: Agent, port: number) =>
  new Promise<void>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/livez', agent }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`status ${res.statusCode}`))));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });

test('SIGTERM under keep-alive load fails no request sent before the listener closed', async (t) => {
  const cluster = await startCluster(db.url, 2, { APP_DRAIN_TIMEOUT_SECONDS: '20' });
  const port = Number(new URL(cluster.url).port);
  const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });
  const sent: Sent[] = [];
  let signalledAt: number | undefined;
  const started = performance.now();

  // Each client sends back to back on its keep-alive connection until a fresh connection is refused.
  const client = async () => {
    for (let i = 0; i < MAX_REQUESTS_PER_CLIENT && performance.now() - started < MAX_LOAD_MS; i += 1) {
      const entry: Sent = { at: performance.now() };
      sent.push(entry);
      try {
        await get(agent, port);
      } catch (error) {
        entry.error = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
        if (entry.error === 'ECONNREFUSED') {
          return;
        }
      }
      if (signalledAt === undefined && sent.length >= 400) {
        signalledAt = performance.now();
        cluster.process.kill('SIGTERM');
      }
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, client));
  agent.destroy();
  t.is(await cluster.stop(), 0);

  // A refused connection proves the listener was closed when it was attempted: the earliest bounds the close.
  const refused = sent.filter((entry) => entry.error === 'ECONNREFUSED').map((entry) => entry.at);
  t.true(refused.length > 0, 'the load ran until the listener closed');
  const listenerClosedAt = Math.min(...refused);
  const before = sent.filter((entry) => entry.at < listenerClosedAt);
  const failed = before.filter((entry) => entry.error !== undefined);
  const duringDrain = before.filter((entry) => signalledAt !== undefined && entry.at >= signalledAt);
  t.log(`${sent.length} requests; ${before.length} sent before the listener closed, ${duringDrain.length} of them after SIGTERM`);
  t.deepEqual(
    failed.map((entry) => entry.error),
    [],
  );
  t.true(before.length >= 400);
});
