import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import type { Logger } from 'pino';
import client from 'prom-client';
import { tracingConfigured } from '../tracing/setup.ts';
import { threadOptions } from './execArgv.ts';
import { type TaskRef, TaskError } from './task.ts';
import { submittingContext } from './taskTrace.ts';
import type { ThreadData, ThreadReply, ThreadRequest } from './thread.ts';

export interface TaskPool {
  /** Runs a task on a worker thread; aborting the signal stops the thread running it. */
  runTask<I, O>(task: TaskRef<I, O>, input: I, options?: { signal?: AbortSignal }): Promise<O>;
  readonly threads: number;
  /** Tasks waiting for a free thread. */
  readonly queueDepth: number;
  /** Takes no more tasks, waits for running ones up to the close timeout, then stops the threads. */
  close(): Promise<void>;
}

/** Runs a task on one of the instance's worker threads and resolves with its output; aborting the signal stops the thread running it. */
export type RunTask = <I, O>(task: TaskRef<I, O>, input: I, options?: { signal?: AbortSignal }) => Promise<O>;

export interface TaskPoolOptions {
  threads: number;
  /** Bound on waiting for running tasks at close. */
  closeTimeoutMs: number;
  registry: client.Registry;
  logger: Logger;
  /**
   * Tasks every thread loads as it starts. With any, one thread is started with the pool and kept
   * while idle, so these tasks never wait for a thread to start and load them (about 170 ms).
   */
  preload?: ReadonlyArray<{ file: string }>;
  /** Given to each thread for its spans' resource. */
  instanceId?: string;
}

const threadFile = new URL(`./thread${extname(fileURLToPath(import.meta.url))}`, import.meta.url).href;

/**
 * Node 20 keeps tsx's module hooks on the main thread, so when running from source each thread
 * registers them itself before loading TypeScript; built code needs nothing.
 */
function threadExecArgv(): string[] {
  const inherited = threadOptions(process.execArgv);
  if (!import.meta.url.endsWith('.ts')) {
    return inherited;
  }
  const register = `import { register } from ${JSON.stringify(import.meta.resolve('tsx/esm/api'))}; register();`;
  return [...inherited, '--import', `data:text/javascript,${encodeURIComponent(register)}`];
}

/** What a thread is posted for a task: the submitting span's context goes along only when it is sampled. */
export function threadRequest<I, O>(task: TaskRef<I, O>, input: I): ThreadRequest {
  const carrier = submittingContext();
  return carrier === undefined
    ? { file: task.file, exportName: task.exportName, input }
    : { file: task.file, exportName: task.exportName, input, trace: { task: task.name, carrier } };
}

/** One piscina pool per instance, with task durations and queue depth as metrics. */
export function createTaskPool(options: TaskPoolOptions): TaskPool {
  const preload = [...new Set((options.preload ?? []).map((task) => task.file))];
  const pool = new Piscina<ThreadRequest, ThreadReply>({
    filename: threadFile,
    minThreads: preload.length > 0 ? 1 : 0,
    maxThreads: options.threads,
    idleTimeout: 60_000,
    closeTimeout: options.closeTimeoutMs,
    execArgv: threadExecArgv(),
    workerData: { preload, instanceId: options.instanceId } satisfies ThreadData,
    // Sync atomics pause a thread between tasks, and with it the timer that exports its spans (ADR 0130).
    ...(tracingConfigured() ? { atomics: 'async' as const } : {}),
  });
  pool.on('error', (error: unknown) => options.logger.warn({ err: error }, 'task pool error'));
  let running = 0;
  const duration = new client.Histogram({
    name: 'backplane_task_duration_seconds',
    help: 'Worker-thread tasks by task name and outcome, from submission to result',
    labelNames: ['task', 'outcome'],
    buckets: [0.005, 0.025, 0.1, 0.5, 1, 5, 15, 60, 300],
    registers: [options.registry],
  });
  new client.Gauge({
    name: 'backplane_task_queue_depth',
    help: 'Tasks waiting for a free worker thread',
    registers: [options.registry],
    collect() {
      this.set(pool.queueSize);
    },
  });
  new client.Gauge({
    name: 'backplane_tasks_running',
    help: 'Tasks submitted and not yet finished, waiting or on a thread',
    registers: [options.registry],
    collect() {
      this.set(running);
    },
  });

  return {
    async runTask<I, O>(task: TaskRef<I, O>, input: I, runOptions: { signal?: AbortSignal } = {}): Promise<O> {
      const started = performance.now();
      running += 1;
      let outcome = 'error';
      try {
        let reply: ThreadReply;
        try {
          reply = await pool.run(threadRequest(task, input), { signal: runOptions.signal ?? null });
        } catch (error) {
          const aborted = (error as { name?: string }).name === 'AbortError';
          throw new TaskError(task.name, {
            code: aborted ? 'task_aborted' : 'task_failed',
            message: aborted ? 'the task was stopped before it finished' : 'the worker thread failed to run the task',
          });
        }
        if (!reply.ok) {
          throw new TaskError(task.name, reply.error);
        }
        outcome = 'ok';
        return reply.output as O;
      } finally {
        running -= 1;
        duration.observe({ task: task.name, outcome }, (performance.now() - started) / 1000);
      }
    },
    get threads() {
      return options.threads;
    },
    get queueDepth() {
      return pool.queueSize;
    },
    close: () => pool.close(),
  };
}
