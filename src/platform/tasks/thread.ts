import { fileURLToPath } from 'node:url';
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

// Set before the preload below imports anything.
const TYPESCRIPT = /\.[cm]?ts$/;
let typescriptHooks: Promise<void> | undefined = import.meta.url.endsWith('.ts') ? Promise.resolve() : undefined;

if (isWorkerThread) {
  await startTracing({ role: 'task', instanceId: (workerData as ThreadData | undefined)?.instanceId });
  // A module that fails to load fails each task from it with task_load_failed, not the thread and every other task.
  await Promise.all(((workerData as ThreadData | undefined)?.preload ?? []).map((file) => importTaskModule(file).catch(() => undefined)));
}

/** The thread's entry: the task, in a span of its own when its submitter was traced. */
export default function runInThread(request: ThreadRequest): Promise<ThreadReply> {
  return request.trace === undefined ? callTask(request) : runTraced(request.trace.task, request.trace.carrier, () => callTask(request));
}

/**
 * Imports a task module, as task_load_failed in one line when it cannot be. An application run
 * from source (`node --import tsx src/main.ts`) has TypeScript tasks, and Node 20 keeps the
 * process's tsx hooks off worker threads: the thread registers tsx itself, before the first
 * TypeScript import (a failed import stays failed). From source, Backplane's own threads already
 * have tsx (pool.ts).
 */
async function importTaskModule(file: string): Promise<Record<string, unknown>> {
  try {
    if (TYPESCRIPT.test(file)) {
      await loadTypeScript();
    }
    return (await import(file)) as Record<string, unknown>;
  } catch (error) {
    throw new TaskLoadError(file, error);
  }
}

function loadTypeScript(): Promise<void> {
  typescriptHooks ??= (async () => {
    let api: string;
    try {
      api = import.meta.resolve('tsx/esm/api');
    } catch {
      throw new Error('it is TypeScript and tsx is not installed: install tsx, or build the application and run the built one');
    }
    const { register } = (await import(api)) as { register(): unknown };
    register();
  })();
  return typescriptHooks;
}

/** A task module that could not be imported: the file and why, in one line, never a stack. */
class TaskLoadError extends Error {
  readonly code = 'task_load_failed';
  constructor(file: string, cause: unknown) {
    // A transform error puts the file and line on its second line: every line, joined, says what and where.
    const why =
      cause instanceof Error
        ? cause.message
            .split('\n')
            .map((line) => line.trim())
            .filter(Boolean)
            .join(' ') || cause.name
        : String(cause);
    super(`task module ${file.startsWith('file:') ? fileURLToPath(file) : file} cannot be loaded: ${why}`);
  }
}

/** Loads the task module once (import caches it) and calls the named export. */
async function callTask(request: ThreadRequest): Promise<ThreadReply> {
  try {
    const module = await importTaskModule(request.file);
    const task = module[request.exportName];
    if (typeof task !== 'function') {
      return { ok: false, error: { code: 'task_not_found', message: `${request.exportName} is not a function of the task module` } };
    }
    return { ok: true, output: await (task as (input: unknown) => unknown)(request.input) };
  } catch (error) {
    return { ok: false, error: describeTaskFailure(error) };
  }
}
