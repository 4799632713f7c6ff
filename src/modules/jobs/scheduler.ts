import type { Logger } from 'pino';
import type { NotificationListener } from '../../platform/db/listener.ts';
import type { Queryable } from '../../platform/db/pool.ts';
import type { JobRegistry, RegisteredJob } from './definitions.ts';
import type { Schedule } from './schedule.ts';
import { acceptedOverride } from './scheduleFloor.ts';
import { DEFINITIONS_CHANNEL, type DefinitionRow, ensureJobsKnown, selectDefinitionRows } from './store/definitions.ts';
import { failAbandonedRuns, insertScheduledRun } from './store/runs.ts';

export interface JobSchedulerOptions {
  db: Queryable;
  listener: NotificationListener;
  jobs: JobRegistry;
  logger: Logger;
  /**
   * Longest wait between ticks when no slot falls sooner: how soon an instance follows a change it
   * was not notified of (a definition edited in SQL). Changes made through the API notify every
   * instance, and a reconnected listener ticks at once.
   */
  maxTickMs?: number;
  /**
   * How often the cluster fails runs abandoned on their last attempt (their lease expired): each
   * instance sweeps about every `sweepEveryMs` x the running instances, at a random phase, so the
   * sweeps do not grow with the instance count (issue 16).
   */
  sweepEveryMs?: number;
  /** Running instances across the cluster; 1 while unknown. */
  runningInstances?: () => number | undefined;
}

export interface JobScheduler {
  /** Ticks now (also what a definition change notification does). */
  wake(): void;
  stop(): Promise<void>;
}

// Ticks land just after a slot, not on it, so the database clock has passed it.
const AFTER_SLOT_MS = 15;
const RETRY_MS = 1_000;

/**
 * The schedule in force: the operator's, unless it no longer parses or runs more often than the
 * job's floor (then the code's, and a warning).
 */
export function effectiveSchedule(job: RegisteredJob, override: string | null, onInvalid?: () => void): Schedule {
  if (override === null) {
    return job.schedule;
  }
  const schedule = acceptedOverride(job, override);
  if (!schedule) {
    onInvalid?.();
    return job.schedule;
  }
  return schedule;
}

/**
 * Each instance ticks on the database clock and inserts only the latest due slot of each enabled
 * job; the unique (job, slot) key makes the instances agree, and after downtime the one latest slot
 * is the catch-up, never a storm of every missed one. An instance ticks just after the next slot of
 * its jobs, when notified of a definition change, and otherwise only every `maxTickMs`: a tick per
 * second per instance was most of what an idle pod cost the database (issue 16).
 */
export function startJobScheduler(options: JobSchedulerOptions): JobScheduler {
  const { db, jobs, logger } = options;
  const maxTickMs = options.maxTickMs ?? 60_000;
  const sweepEveryMs = options.sweepEveryMs ?? 15_000;
  const names = jobs.names();
  const handled = new Map<string, number>();
  const warned = new Set<string>();
  let known = false;
  let nextSweep = 0;
  let timer: NodeJS.Timeout | undefined;
  let ticking: Promise<void> | undefined;
  let again = false;
  let stopped = false;
  let failing = false;

  async function scheduleSlot(job: RegisteredJob, row: DefinitionRow): Promise<number | undefined> {
    if (row.scheduled_since === null) {
      known = false;
      return undefined;
    }
    if (!(row.enabled ?? job.enabled)) {
      return undefined;
    }
    const schedule = effectiveSchedule(job, row.schedule, () => {
      if (!warned.has(job.name)) {
        warned.add(job.name);
        logger.warn({ job: job.name }, 'the stored schedule no longer parses or runs more often than the job allows; using the schedule in code');
      }
    });
    const now = row.db_now;
    const slot = schedule.latestSlot(now);
    if (slot && slot >= row.scheduled_since && slot.getTime() > (handled.get(job.name) ?? 0)) {
      await insertScheduledRun(db, { job: job.name, slot, queue: job.queue, maxAttempts: job.maxAttempts, enabledByDefault: job.enabled });
      handled.set(job.name, slot.getTime());
    }
    const next = schedule.nextSlot(now);
    return next ? next.getTime() - now.getTime() : undefined;
  }

  /** One pass; returns how long to wait for the next. */
  async function tick(): Promise<number> {
    if (!known) {
      await ensureJobsKnown(db, names);
      known = true;
    }
    const rows = await selectDefinitionRows(db, names);
    let wait = maxTickMs;
    for (const row of rows) {
      const untilNext = await scheduleSlot(jobs.get(row.name)!, row);
      if (untilNext !== undefined) {
        wait = Math.min(wait, untilNext + AFTER_SLOT_MS);
      }
    }
    if (Date.now() >= nextSweep) {
      const sharers = Math.max(1, options.runningInstances?.() ?? 1);
      nextSweep = Date.now() + sweepEveryMs * sharers * (0.5 + Math.random());
      const failed = await failAbandonedRuns(db);
      if (failed > 0) {
        logger.warn({ runs: failed }, 'runs failed: their instance stopped during the last attempt');
      }
    }
    wait = Math.min(wait, nextSweep - Date.now());
    return Math.max(20, wait);
  }

  function run(): void {
    timer = undefined;
    if (stopped) {
      return;
    }
    if (ticking) {
      again = true;
      return;
    }
    ticking = (async () => {
      let wait = RETRY_MS;
      try {
        wait = await tick();
        if (failing) {
          failing = false;
          logger.info('job scheduler ticks again');
        }
      } catch (error) {
        // Once per outage, not once a second.
        if (!failing) {
          failing = true;
          logger.warn({ err: error }, 'job scheduler tick failed; retrying every second');
        }
      }
      ticking = undefined;
      if (!stopped) {
        timer = setTimeout(run, again ? 0 : wait);
        timer.unref();
        again = false;
      }
    })();
  }

  const wake = () => {
    clearTimeout(timer);
    run();
  };
  if (names.length > 0) {
    options.listener.listen(DEFINITIONS_CHANNEL, wake);
    options.listener.onConnected(wake);
    run();
  }
  return {
    wake,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await ticking;
    },
  };
}
