import type { StatementRunner } from './statementRunner.ts';
import { type AttemptKey, completeJobs } from './completeJobs.ts';

export interface CompletionBatch {
  /** True once the attempt is recorded completed; false when it was no longer this instance's. Rejects when the statement failed. */
  complete(key: AttemptKey): Promise<boolean>;
}

interface Waiting {
  key: AttemptKey;
  resolve(completed: boolean): void;
  reject(error: unknown): void;
}

/**
 * Completions written many per statement without waiting for a timer: the first goes out on the
 * next turn of the event loop, and those that arrive while a statement runs go together in the
 * next one, so the batch grows with the load and a lone job waits for no one.
 */
export function createCompletionBatch(db: StatementRunner, instanceId: string): CompletionBatch {
  let waiting: Waiting[] = [];
  let writing = false;

  async function write(): Promise<void> {
    writing = true;
    while (waiting.length > 0) {
      const batch = waiting;
      waiting = [];
      try {
        const completed = await completeJobs(
          db,
          instanceId,
          batch.map((entry) => entry.key),
        );
        batch.forEach((entry) => entry.resolve(completed.has(entry.key.id)));
      } catch (error) {
        batch.forEach((entry) => entry.reject(error));
      }
    }
    writing = false;
  }

  return {
    complete(key) {
      return new Promise<boolean>((resolve, reject) => {
        waiting.push({ key, resolve, reject });
        if (!writing) {
          writing = true;
          setImmediate(() => void write());
        }
      });
    },
  };
}
