import { Cron } from 'croner';
import { JobsError } from './errors.ts';

/** When a job's slots fall, in UTC. Slots are instants; the scheduler runs the latest due one. */
export interface Schedule {
  readonly text: string;
  /** The latest slot at or before `at` (within its second), if any. */
  latestSlot(at: Date): Date | undefined;
  /** The first slot after `at`, if any. */
  nextSlot(at: Date): Date | undefined;
}

const EVERY = /^@every ([1-9]\d{0,4})(s|m|h)$/;
const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000 } as const;
const MAX_EVERY_MS = 24 * 3_600_000;
export const MAX_SCHEDULE_LENGTH = 100;

const invalid = (detail: string) => new JobsError('invalid_job_schedule', detail);

/** `@every 15s|5m|1h`: slots on multiples of the interval since the Unix epoch, so every instance agrees. */
function everySchedule(text: string, count: number, unit: keyof typeof UNIT_MS): Schedule {
  const interval = count * UNIT_MS[unit];
  if (interval > MAX_EVERY_MS) {
    throw invalid('An @every interval is at most 24h; use a cron expression for longer periods.');
  }
  return {
    text,
    latestSlot: (at) => new Date(Math.floor(at.getTime() / interval) * interval),
    nextSlot: (at) => new Date((Math.floor(at.getTime() / interval) + 1) * interval),
  };
}

function cronSchedule(text: string): Schedule {
  let cron: Cron;
  try {
    cron = new Cron(text, { timezone: 'UTC', mode: '5-part' });
  } catch {
    throw invalid('The schedule must be a 5-field cron expression (UTC), a descriptor such as @hourly, or @every with s, m or h.');
  }
  if (cron.nextRun(new Date()) === null) {
    throw invalid('The cron expression never matches a date.');
  }
  return {
    text,
    latestSlot: (at) => cron.previousRuns(1, at)[0] ?? undefined,
    nextSlot: (at) => cron.nextRun(at) ?? undefined,
  };
}

/** Parses a schedule or throws invalid_job_schedule. */
export function parseSchedule(text: string): Schedule {
  if (text.length === 0 || text.length > MAX_SCHEDULE_LENGTH || text.trim() !== text) {
    throw invalid(`A schedule is 1 to ${MAX_SCHEDULE_LENGTH} characters without surrounding spaces.`);
  }
  const every = EVERY.exec(text);
  if (every) {
    return everySchedule(text, Number(every[1]), every[2] as keyof typeof UNIT_MS);
  }
  if (text.startsWith('@every')) {
    throw invalid('@every takes a whole number and a unit: s, m or h (for example @every 5m).');
  }
  return cronSchedule(text);
}
