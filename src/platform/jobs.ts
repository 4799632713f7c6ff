import type { Logger } from 'pino';
import type { Queryable } from './db/pool.ts';
import type { RunTask } from './tasks/pool.ts';

// A job is declared by the module whose code it runs; the jobs module schedules and runs them all.

/** What a job handler is given for one attempt of one run. */
export interface JobContext {
  /** The instance's pool; handlers open transactions on it as they need. */
  db: Queryable;
  /** Heavy work goes to the instance's worker threads, as plain data. */
  runTask: RunTask;
  /** Aborted on timeout, on shutdown past the drain timeout, and when another instance took the run over. */
  signal: AbortSignal;
  /** The instance's logger; each line carries the run's id. */
  logger: Logger;
  /** The run and attempt this call makes. */
  run: { id: string; job: string; trigger: 'schedule' | 'manual'; slot: Date | null; attempt: number; maxAttempts: number };
}

/** Work waiting for a job that drains a queue of its own, as the jobs overview shows it. */
export interface JobBacklog {
  /** Items waiting, due or not. */
  depth: number;
  /** Items whose time has come and that no run holds. */
  due: number;
  /** Items a run holds right now. */
  inProgress: number;
  /** When the longest-waiting due item became due; null when none is due. */
  oldestDueAt: Date | null;
  /** Outcomes over the last 24 hours, by name (e.g. revoked, retrying, abandoned). */
  last24h: Record<string, number>;
}

/** A job as its module declares it in code; operators override `enabled` and `schedule` only. */
export interface JobDefinition {
  /** `<module>_…`: public (ops routes, metrics labels, operators' overrides). */
  name: string;
  /** One line for the jobs overview. */
  description: string;
  /** 5-field cron (UTC), a descriptor such as @hourly, or `@every 30s|5m|1h`. */
  schedule: string;
  /** Default true. */
  enabled?: boolean;
  /**
   * The shortest time between two runs that makes sense for the job; an operator's schedule that
   * runs more often is refused. Default 1: the scheduler's own resolution.
   */
  minIntervalSeconds?: number;
  /** An attempt running longer is aborted (`signal`) and counts as failed. */
  timeoutSeconds: number;
  /** Attempts of one run before it is recorded as failed. */
  maxAttempts: number;
  /** Default `default`. */
  queue?: string;
  /** One attempt of one run; throwing fails the attempt. */
  handler(context: JobContext): Promise<void>;
  /** For a job that drains a queue of its own: reads it (inside the overview's bounded transaction). */
  backlog?: (db: Queryable) => Promise<JobBacklog>;
}

/** Declares a job; the registry checks it when the instance starts. */
export function defineJob(definition: JobDefinition): JobDefinition {
  return definition;
}
