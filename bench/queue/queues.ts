// The queues the bench runs, by name: a new one (Backplane's, once wired) is one adapter file and one line here.
import type { QueueUnderTest } from './queueUnderTest.ts';

export const queues: Record<string, () => Promise<QueueUnderTest>> = {
  'graphile-worker': async () => (await import('./graphileWorker.ts')).graphileWorker,
  'pg-boss': async () => (await import('./pgBoss.ts')).pgBoss,
};

export async function loadQueue(name: string): Promise<QueueUnderTest> {
  const load = queues[name];
  if (!load) {
    throw new Error(`unknown queue ${name}: one of ${Object.keys(queues).join(', ')}`);
  }
  return load();
}
