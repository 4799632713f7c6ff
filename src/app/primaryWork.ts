import type { PrimaryContext, PrimaryWork } from '../platform/module.ts';
import type { Application } from './application.ts';

/** The primary work of every module of the application, served and closed together. */
export interface StartedPrimaryWork {
  /** Hands each instance the primary forks to every module's work. */
  serve(worker: unknown): void;
  /** Closes the work in the reverse of the order it started. */
  close(): Promise<void>;
}

/**
 * Starts each module's declared `primaryWork()` and `primary()` in the application's order (ADR 0120, amended
 * 2026-11-26); one that fails to start closes those before it.
 */
export async function startPrimaryWork(application: Application, context: PrimaryContext): Promise<StartedPrimaryWork> {
  const started: PrimaryWork[] = [];
  const close = async () => {
    for (const work of [...started].reverse()) {
      await work.close();
    }
  };
  try {
    for (const module of application.modules) {
      for (const work of [await module.primaryWork?.(context), module.primary?.(context)]) {
        if (work) {
          started.push(work);
        }
      }
    }
  } catch (error) {
    await close();
    throw error;
  }
  return { serve: (worker) => started.forEach((work) => work.serve?.(worker)), close };
}
