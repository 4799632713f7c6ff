import type { TaskFailure } from './task.ts';

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
