import { Cron } from 'croner';
import { JobsError } from './errors.ts';

/** When a job's slots fall, in UTC. Slots are instants; the scheduler runs the latest due one. */
export interface Schedule {
  readonly text: string;
  /** The latest slot at or before `at` (within its second), if any. */
  latestSlot(at: Date): Date | undefined;
  /** The first slot after `at`, if any. */
  nextSlot(at: Date): Date | undefined;
  /**
   * The shortest time between two consecutive slots from `from` on, in ms (Infinity with fewer than
   * two slots); it may stop looking once it has found a gap below `enoughBelowMs`.
   */
  shortestGapMs(from: Date, enoughBelowMs: number): number;
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
    shortestGapMs: () => interval,
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
    shortestGapMs: (from, enoughBelowMs) => shortestCronGapMs(cron, from, enoughBelowMs),
  };
}

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;
// Every pair of consecutive days of the month (31st then 1st included) falls within 62 days;
// only 29 February then 1 March needs a leap year, and is not looked for.
const CROSS_DAY_WINDOW_DAYS = 62;

/**
 * A 5-field cron in UTC fires at the same times of day on every day it matches, so the shortest gap
 * is either between two times of one day or from the last time of a day to the first of the next
 * matching day: one day's times and the matching days of a 62-day window show both, in a few
 * hundred steps of croner at most, rather than every slot of the window.
 */
function shortestCronGapMs(cron: Cron, from: Date, enoughBelowMs: number): number {
  const found = cron.nextRun(from);
  if (!found) {
    return Number.POSITIVE_INFINITY;
  }
  const dayOf = (date: Date) => Math.floor(date.getTime() / DAY_MS);
  const firstRunOn = (day: number) => cron.nextRun(new Date(day * DAY_MS - 1));
  const day = dayOf(found);
  const first = firstRunOn(day)!;
  let shortest = Number.POSITIVE_INFINITY;
  let last = first;
  for (let next = cron.nextRun(first); next && dayOf(next) === day; next = cron.nextRun(next)) {
    shortest = Math.min(shortest, next.getTime() - last.getTime());
    last = next;
    if (shortest < enoughBelowMs || shortest <= MINUTE_MS) {
      return shortest;
    }
  }
  const lastToFirstMs = first.getTime() - last.getTime();
  let matchedDay = day;
  for (let next = firstRunOn(day + 1); next && dayOf(next) - day <= CROSS_DAY_WINDOW_DAYS; next = firstRunOn(matchedDay + 1)) {
    const nextDay = dayOf(next);
    shortest = Math.min(shortest, (nextDay - matchedDay) * DAY_MS + lastToFirstMs);
    matchedDay = nextDay;
  }
  return shortest;
}

/** `300` → `5m`: the bound as an operator would write it in `@every`. */
export function formatInterval(ms: number): string {
  const seconds = Math.round(ms / 1_000);
  if (seconds % 3_600 === 0) {
    return `${seconds / 3_600}h`;
  }
  return seconds % 60 === 0 ? `${seconds / 60}m` : `${seconds}s`;
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
