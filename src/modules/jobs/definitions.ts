import type { JobBacklog, JobContext, JobDefinition } from '../../platform/jobs.ts';
import type { Queryable } from '../../platform/db/pool.ts';
import { type Schedule, formatInterval, parseSchedule } from './schedule.ts';

export type { JobBacklog, JobContext, JobDefinition } from '../../platform/jobs.ts';

/** A definition checked at start-up, with its defaults filled in and its schedule parsed. */
export interface RegisteredJob {
  name: string;
  description: string;
  schedule: Schedule;
  enabled: boolean;
  minIntervalSeconds: number;
  timeoutSeconds: number;
  maxAttempts: number;
  queue: string;
  handler(context: JobContext): Promise<void>;
  backlog: ((db: Queryable) => Promise<JobBacklog>) | undefined;
}

export interface JobRegistry {
  list(): RegisteredJob[];
  get(name: string): RegisteredJob | undefined;
  names(): string[];
}

export const JOB_NAME = /^[a-z][a-z0-9_]{0,62}$/;
export const QUEUE_NAME = /^[a-z][a-z0-9_]{0,62}$/;

/** Checks every definition once; a bad one stops start-up, naming the job. */
export function createJobRegistry(definitions: JobDefinition[]): JobRegistry {
  const jobs = new Map<string, RegisteredJob>();
  for (const definition of definitions) {
    const problem = (what: string) => new Error(`job ${definition.name}: ${what}`);
    if (!JOB_NAME.test(definition.name)) {
      throw problem('the name must be lowercase letters, digits and _');
    }
    if (jobs.has(definition.name)) {
      throw problem('defined twice');
    }
    if (!Number.isInteger(definition.timeoutSeconds) || definition.timeoutSeconds < 1 || definition.timeoutSeconds > 86_400) {
      throw problem('timeoutSeconds must be a whole number from 1 to 86400');
    }
    if (!Number.isInteger(definition.maxAttempts) || definition.maxAttempts < 1 || definition.maxAttempts > 100) {
      throw problem('maxAttempts must be a whole number from 1 to 100');
    }
    const queue = definition.queue ?? 'default';
    if (!QUEUE_NAME.test(queue)) {
      throw problem('the queue name must be lowercase letters, digits and _');
    }
    const minIntervalSeconds = definition.minIntervalSeconds ?? 1;
    if (!Number.isInteger(minIntervalSeconds) || minIntervalSeconds < 1 || minIntervalSeconds > 86_400) {
      throw problem('minIntervalSeconds must be a whole number from 1 to 86400');
    }
    let schedule: Schedule;
    try {
      schedule = parseSchedule(definition.schedule);
    } catch (error) {
      throw problem(`invalid schedule: ${(error as Error).message}`);
    }
    const gapMs = schedule.shortestGapMs(new Date(), minIntervalSeconds * 1_000);
    if (gapMs < minIntervalSeconds * 1_000) {
      throw problem(`the schedule runs ${formatInterval(gapMs)} apart, more often than its minIntervalSeconds (${minIntervalSeconds})`);
    }
    jobs.set(definition.name, {
      name: definition.name,
      description: definition.description,
      schedule,
      enabled: definition.enabled ?? true,
      minIntervalSeconds,
      timeoutSeconds: definition.timeoutSeconds,
      maxAttempts: definition.maxAttempts,
      queue,
      handler: definition.handler,
      backlog: definition.backlog,
    });
  }
  return {
    list: () => [...jobs.values()],
    get: (name) => jobs.get(name),
    names: () => [...jobs.keys()],
  };
}
