import type { Logger } from 'pino';
import type { z } from 'zod';
import type { Queryable } from '../../../platform/db/pool.ts';
import type { RunTask } from '../../../platform/tasks/pool.ts';

/** What a handler is given for one attempt of one job. */
export interface QueueJobContext<P> {
  /** The payload as the task's schema parsed it when the job was claimed. */
  payload: P;
  /**
   * A transactional task's own transaction, in which the job is marked completed: its writes and the
   * completion commit together or not at all. Otherwise the instance's pool.
   */
  db: Queryable;
  /** Aborted at the task's timeout, when the job is cancelled, when its lease was lost, and when the drain ends. */
  signal: AbortSignal;
  /** CPU-heavy work on the instance's worker threads, as plain data; stopped with the signal. */
  runTask: RunTask;
  logger: Logger;
  job: { id: string; task: string; queue: string; attempt: number; maxAttempts: number };
}

export interface QueueBackoff {
  /** The wait after the first failed attempt; it doubles with each further one. Default 1. */
  initialSeconds?: number;
  /** The longest wait. Default 3600. */
  maxSeconds?: number;
}

/** A kind of job as its module declares it: the name, the payload's schema, and how it runs. */
export interface QueueTask<Name extends string = string, Input = unknown, Output = unknown> {
  name: Name;
  payload: z.ZodType<Output, Input>;
  /** Default `default`. */
  queue?: string;
  /** Default 10. */
  maxAttempts?: number;
  backoff?: QueueBackoff;
  /** Default 60. */
  timeoutSeconds?: number;
  /** Lower runs first. Default 0. */
  priority?: number;
  /**
   * True: the handler runs in a transaction that also marks the job completed, so its writes to this
   * database happen exactly once (ADR 0133); one connection per running job, no batched completion.
   */
  transactional?: boolean;
  handler(context: QueueJobContext<Output>): Promise<void>;
}

/** Declares a task; TypeScript keeps its name and payload types for `addJobs`. */
export function defineQueueTask<const Name extends string, Input, Output>(task: QueueTask<Name, Input, Output>): QueueTask<Name, Input, Output> {
  return task;
}

/** A task checked at start-up, its defaults filled in. */
export interface RegisteredQueueTask {
  name: string;
  payload: z.ZodType;
  queue: string;
  maxAttempts: number;
  backoff: Required<QueueBackoff>;
  timeoutSeconds: number;
  priority: number;
  transactional: boolean;
  handler(context: QueueJobContext<unknown>): Promise<void>;
}

/** What the types below read of a task: its name and its payload's schema. */
export interface QueueTaskShape {
  readonly name: string;
  readonly payload: z.ZodType;
}

// Declared on the registry only, so the types below know every task's name and payload.
declare const tasksOf: unique symbol;

export interface QueueTaskRegistry<T extends QueueTaskShape = QueueTaskShape> {
  readonly [tasksOf]?: T;
  get(name: string): RegisteredQueueTask | undefined;
  list(): RegisteredQueueTask[];
  names(): string[];
  /** The queues the tasks run in, each once. */
  queues(): string[];
}

/** The payload `addJobs` takes for the task named N. */
export type PayloadOf<T, N extends string> = T extends { name: N; payload: infer S extends z.ZodType } ? z.input<S> : never;

export const TASK_NAME = /^[a-z][a-z0-9_]{0,62}$/;

const wholeIn = (value: number, min: number, max: number) => Number.isInteger(value) && value >= min && value <= max;

/** Checks every task once; a bad one stops start-up, naming the task. */
export function createQueueTaskRegistry<const T extends readonly QueueTaskShape[]>(tasks: T): QueueTaskRegistry<T[number]> {
  const registered = new Map<string, RegisteredQueueTask>();
  // Each element comes from defineQueueTask, which checked it whole.
  for (const task of tasks as unknown as readonly QueueTask<string, unknown, unknown>[]) {
    const problem = (what: string) => new Error(`queue task ${task.name}: ${what}`);
    if (!TASK_NAME.test(task.name)) {
      throw problem('the name must be lowercase letters, digits and _');
    }
    if (registered.has(task.name)) {
      throw problem('defined twice');
    }
    const queue = task.queue ?? 'default';
    if (!TASK_NAME.test(queue)) {
      throw problem('the queue name must be lowercase letters, digits and _');
    }
    const maxAttempts = task.maxAttempts ?? 10;
    const timeoutSeconds = task.timeoutSeconds ?? 60;
    const priority = task.priority ?? 0;
    const backoff = { initialSeconds: task.backoff?.initialSeconds ?? 1, maxSeconds: task.backoff?.maxSeconds ?? 3_600 };
    if (!wholeIn(maxAttempts, 1, 100)) {
      throw problem('maxAttempts must be a whole number from 1 to 100');
    }
    if (!wholeIn(timeoutSeconds, 1, 86_400)) {
      throw problem('timeoutSeconds must be a whole number from 1 to 86400');
    }
    if (!wholeIn(priority, -1_000, 1_000)) {
      throw problem('priority must be a whole number from -1000 to 1000');
    }
    if (!(backoff.initialSeconds > 0 && backoff.maxSeconds >= backoff.initialSeconds && backoff.maxSeconds <= 86_400)) {
      throw problem('backoff needs 0 < initialSeconds <= maxSeconds <= 86400');
    }
    registered.set(task.name, {
      name: task.name,
      payload: task.payload as z.ZodType,
      queue,
      maxAttempts,
      backoff,
      timeoutSeconds,
      priority,
      transactional: task.transactional ?? false,
      handler: task.handler,
    });
  }
  return {
    get: (name) => registered.get(name),
    list: () => [...registered.values()],
    names: () => [...registered.keys()],
    queues: () => [...new Set([...registered.values()].map((task) => task.queue))],
  };
}
