// The worker processes of one queue under test: each its own Node process (worker.ts), "2 instances"
// being 2 of them. They report jobs started and latencies over IPC; one can be killed with SIGKILL
// and replaced, as a crashed instance is restarted by its supervisor.
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { stopChild } from '../support/harness.ts';
import type { WorkerMode, WorkerReport } from './worker.ts';

const READY_WITHIN_MS = 60_000;

export interface WorkerGroup {
  /** Jobs started by every process so far, killed ones included (up to their last report). */
  started(): number;
  /** [job number, add-to-start ms] reported so far. */
  latencies(): Array<[number, number]>;
  pids(): number[];
  /** SIGKILL the worker in `slot`, then start another in its place and wait until it takes jobs. */
  killAndRestart(slot: number): Promise<void>;
  stop(): Promise<void>;
}

interface Slot {
  child: ChildProcess;
  started: number;
}

export async function startWorkers(queueName: string, url: string, jobQueue: string, mode: WorkerMode, count: number): Promise<WorkerGroup> {
  let retired = 0;
  const latencies: Array<[number, number]> = [];
  const launch = (): Promise<Slot> => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'worker.ts'), queueName, jobQueue, mode], {
      env: { ...process.env, DATABASE_URL: url },
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    const slot: Slot = { child, started: 0 };
    return new Promise<Slot>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${queueName} worker not ready within ${READY_WITHIN_MS} ms`)), READY_WITHIN_MS);
      const early = (code: number | null) => {
        clearTimeout(timer);
        reject(new Error(`${queueName} worker exited (${code}) before it was ready`));
      };
      child.once('exit', early);
      child.on('message', (message: WorkerReport) => {
        slot.started = message.started;
        latencies.push(...message.latencies);
        if (message.ready) {
          clearTimeout(timer);
          child.off('exit', early);
          resolve(slot);
        }
      });
    });
  };
  const slots = await Promise.all(Array.from({ length: count }, launch));
  return {
    started: () => retired + slots.reduce((sum, slot) => sum + slot.started, 0),
    latencies: () => latencies,
    pids: () => slots.map((slot) => slot.child.pid!),
    async killAndRestart(index) {
      const slot = slots[index]!;
      const exited = new Promise((resolve) => slot.child.once('exit', resolve));
      slot.child.kill('SIGKILL');
      await exited;
      retired += slot.started;
      slots[index] = await launch();
    },
    async stop() {
      await Promise.all(slots.map((slot) => stopChild(slot.child)));
    },
  };
}
