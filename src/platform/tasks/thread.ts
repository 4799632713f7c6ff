import type { TaskFailure } from './task.ts';

/** What the pool posts to a thread: which export of which module, and its plain-data input. */
export interface ThreadRequest {
  file: string;
  exportName: string;
  input: unknown;
}

export type ThreadReply = { ok: true; output: unknown } | { ok: false; error: TaskFailure };

const CODE = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/;
const SQLSTATE = /^[0-9A-Z]{5}$/;
const MAX_MESSAGE = 300;

/** Reduces whatever a task threw to a code and a short message; stacks and objects stay in the thread. */
export function describeTaskFailure(error: unknown): TaskFailure {
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message.slice(0, MAX_MESSAGE) : 'the task threw a value that is not an Error';
  if (typeof code === 'string' && CODE.test(code)) {
    return { code, message };
  }
  if (typeof code === 'string' && SQLSTATE.test(code)) {
    // The driver's text can quote data; the SQLSTATE says enough to look further in the logs.
    return { code: 'database_error', message: `the database refused a statement (SQLSTATE ${code})` };
  }
  return { code: 'task_failed', message };
}

/** The thread's entry: loads the task module once (import caches it) and calls the named export. */
export default async function runInThread(request: ThreadRequest): Promise<ThreadReply> {
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
