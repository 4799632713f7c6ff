// What the queue bench needs from a job queue: one file per queue implements this (graphileWorker.ts,
// pgBoss.ts; Backplane's own queue when it is wired), and queues.ts names it. The bench adds jobs from
// its own process and runs the queue's workers in child processes (worker.ts), one queue per run.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type pg from 'pg';

/** A job's payload: its number within the run and when it was added (epoch ms, sub-ms, the same clock in every process). */
export interface JobPayload {
  n: number;
  addedAt: number;
}

/** Epoch milliseconds with sub-millisecond resolution, comparable across processes on one machine. */
export const epochMs = (): number => performance.timeOrigin + performance.now();

/** The installed version of an npm package (some export no package.json). */
export const packageVersion = (name: string): string =>
  (JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;

export interface Producer {
  /** Makes `queue` ready to take jobs (a queue some libraries must create before use). */
  createQueue(queue: string): Promise<void>;
  /** Adds one job through the library's own connection, committed on return. */
  addOne(queue: string, payload: JobPayload): Promise<void>;
  /** Adds jobs inside the caller's open transaction on `client`: they exist only if it commits. */
  addWithin(client: pg.ClientBase, queue: string, payloads: JobPayload[]): Promise<void>;
  /**
   * What an operator does for the jobs a killed instance holds when the queue itself releases them
   * only after a timeout longer than a bounded run: makes them runnable again. Called once no live
   * worker holds a job. Returns how many were released.
   */
  releaseHeld?(client: pg.ClientBase, queue: string): Promise<number>;
  close(): Promise<void>;
}

export interface Consumer {
  /** Stops taking jobs and finishes (or hands back) those in hand. */
  stop(): Promise<void>;
}

export interface QueueUnderTest {
  /** The row's name in the table. */
  name: string;
  /** The package and version, or the commit, that ran. */
  version: string;
  /** The settings the workers and producer ran with, as the README reports them. */
  settings: Record<string, unknown>;
  /** Creates the queue's tables in the database once, before any worker starts. */
  install(url: string): Promise<void>;
  openProducer(url: string): Promise<Producer>;
  /** In a worker process: takes jobs of `queue` and calls `handle` with their payloads (one or a batch at a time). */
  startConsumer(url: string, queue: string, handle: (payloads: JobPayload[]) => Promise<void>): Promise<Consumer>;
  /** Jobs of `queue` not finished: waiting to run, and taken by a worker (running, or held by one that died). */
  unfinished(client: pg.ClientBase, queue: string): Promise<{ waiting: number; taken: number }>;
}
