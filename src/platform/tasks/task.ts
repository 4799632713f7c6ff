import { existsSync } from 'node:fs';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AppError } from '../errors.ts';

/**
 * A function that runs on a worker thread, named for metrics and logs. Input and output are plain
 * data (structured-clonable): no class instances, connections or functions cross the boundary.
 */
export interface TaskRef<I, O> {
  /** Lowercase, dotted (`notes.digest`): a label of the task metrics. */
  readonly name: string;
  /** file: URL of the module exporting the function. */
  readonly file: string;
  /** The exported function's name in that file. */
  readonly exportName: string;
  /** Carries the input and output types only. */
  readonly types?: { input: I; output: O };
}

type TaskFunction = (input: never) => unknown;

const TASK_NAME = /^[a-z][a-z0-9_.]{0,62}$/;

/**
 * Declares a task from the module next to the caller: `defineTask<typeof purge>('retention.purge',
 * import.meta.url, './tasks/purge', 'purge')`. The file keeps the caller's extension, so the same
 * declaration loads TypeScript source under tsx and compiled JavaScript from dist/.
 */
export function defineTask<F extends TaskFunction>(
  name: string,
  callerUrl: string,
  relativePath: string,
  exportName: string,
): TaskRef<Parameters<F>[0], Awaited<ReturnType<F>>> {
  if (!TASK_NAME.test(name)) {
    throw new Error(`task name ${name} must be lowercase letters, digits, dots and underscores`);
  }
  const file = new URL(relativePath + extname(fileURLToPath(callerUrl)), callerUrl).href;
  if (!existsSync(fileURLToPath(file))) {
    throw new Error(`task ${name}: ${file} does not exist`);
  }
  return { name, file, exportName };
}

/** What crosses back from a thread when a task throws: a code and a message, never a stack or object. */
export interface TaskFailure {
  /** The thrown AppError's code, or `task_failed`. */
  code: string;
  /** The error's message. */
  message: string;
}

/** A task's error, rebuilt on the calling side from its code and message. */
export class TaskError extends AppError {
  readonly task: string;
  constructor(task: string, failure: TaskFailure) {
    super(failure.code, failure.message);
    this.task = task;
  }
}
