import { isWorkerThread, workerData } from 'piscina';
import { startTracing } from '../tracing/setup.ts';
import { describeTaskFailure } from './failure.ts';
import type { TaskFailure } from './task.ts';
import { type TaskCarrier, runTraced } from './taskTrace.ts';

/** What the pool posts to a thread: which export of which module, and its plain-data input. */
export interface ThreadRequest {
  file: string;
  exportName: string;
  input: unknown;
  /** The submitting span's context and the task's name, only when that span is sampled (taskTrace.ts). */
  trace?: { task: string; carrier: TaskCarrier };
}

export type ThreadReply = { ok: true; output: unknown } | { ok: false; error: TaskFailure };

/** What the pool gives every thread as it starts. */
export interface ThreadData {
  /** Task modules loaded before the thread reports ready, so their first task starts at once. */
  preload: string[];
  /** The instance that owns the pool: a resource attribute of this thread's spans. */
  instanceId?: string | undefined;
}

if (isWorkerThread) {
  await startTracing({ role: 'task', instanceId: (workerData as ThreadData | undefined)?.instanceId });
  await Promise.all(((workerData as ThreadData | undefined)?.preload ?? []).map((file) => import(file)));
}

/** The thread's entry: the task, in a span of its own when its submitter was traced. */
export default function runInThread(request: ThreadRequest): Promise<ThreadReply> {
  return request.trace === undefined ? callTask(request) : runTraced(request.trace.task, request.trace.carrier, () => callTask(request));
}

/** Loads the task module once (import caches it) and calls the named export. */
async function callTask(request: ThreadRequest): Promise<ThreadReply> {
  try {
    const module = (await import(request.file)) as Record<string, unknown>;
    const task = module[request.exportName];
    if (typeof task !== 'function') {
      return { ok: false, error: { code: 'task_not_found', message: `${request.exportName} is not a function of the task module` } };
    }
    return { ok: true, output: await (task as (input: unknown) => unknown)(request.input) };
  } catch (error) {
    return { ok: false, error: describeTaskFailure(error) };
  }
}
