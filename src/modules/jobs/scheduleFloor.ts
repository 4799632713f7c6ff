import { AppError } from '../../platform/errors.ts';
import type { RegisteredJob } from './definitions.ts';
import { type Schedule, formatInterval, parseSchedule } from './schedule.ts';

/**
 * An operator's schedule for a job: it must parse (invalid_job_schedule) and run no more often than
 * the job's declared floor (validation_failed, naming the bound).
 */
export function parseJobSchedule(job: RegisteredJob, text: string, from = new Date()): Schedule {
  const schedule = parseSchedule(text);
  const floorMs = job.minIntervalSeconds * 1_000;
  const gapMs = schedule.shortestGapMs(from, floorMs);
  if (gapMs < floorMs) {
    const bound = formatInterval(floorMs);
    throw new AppError('validation_failed', `${job.name} runs at most once every ${bound}; this schedule runs ${formatInterval(gapMs)} apart.`, {
      issues: [{ location: 'body.schedule', message: `must not run more often than once every ${bound}` }],
    });
  }
  return schedule;
}

const lastOverride = new WeakMap<RegisteredJob, { text: string; schedule: Schedule | undefined }>();

/**
 * The same check for a stored override, remembered per job: the scheduler asks every tick, and a
 * cron's gap takes a few hundred steps to find. Undefined when the override is refused.
 */
export function acceptedOverride(job: RegisteredJob, text: string): Schedule | undefined {
  const remembered = lastOverride.get(job);
  if (remembered?.text === text) {
    return remembered.schedule;
  }
  let schedule: Schedule | undefined;
  try {
    schedule = parseJobSchedule(job, text);
  } catch {
    schedule = undefined;
  }
  lastOverride.set(job, { text, schedule });
  return schedule;
}
