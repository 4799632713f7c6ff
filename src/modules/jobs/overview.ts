import type { z } from 'zod';
import type { JobBacklog, RegisteredJob } from './definitions.ts';
import type { JobsServiceDeps } from './ports.ts';
import { withReadTimeout } from './readTimeout.ts';
import type { Overview } from './schemas.ts';
import { type DefinitionRow, selectDefinitionRows } from './store/definitions.ts';
import { type LastRunRow, type RunState, selectLastRuns, selectLiveConsumers, selectQueueLoad, selectRecentCounts } from './store/reads.ts';
import { definitionView, durationMs, iso } from './views.ts';

type OverviewBody = z.infer<typeof Overview>;
type Counts = Record<RunState, number>;

function backlogView(backlog: JobBacklog): NonNullable<OverviewBody['jobs'][number]['backlog']> {
  return {
    depth: backlog.depth,
    due: backlog.due,
    in_progress: backlog.inProgress,
    oldest_due_at: iso(backlog.oldestDueAt),
    last_24h: backlog.last24h,
  };
}

function jobEntry(
  job: RegisteredJob,
  row: DefinitionRow,
  last: LastRunRow | undefined,
  counts: Counts | undefined,
  backlog: JobBacklog | undefined,
): OverviewBody['jobs'][number] {
  const definition = definitionView(job, row);
  return {
    name: job.name,
    queue: job.queue,
    enabled: definition.enabled,
    schedule: definition.schedule,
    next_run_at: definition.next_run_at,
    last_run: last
      ? {
          id: last.id,
          trigger: last.trigger,
          state: last.state,
          attempts: last.attempts,
          instance_id: last.instance_id,
          started_at: last.started_at.toISOString(),
          finished_at: iso(last.finished_at),
          duration_ms: durationMs(last.started_at, last.finished_at),
          error: last.error,
        }
      : null,
    last_24h: counts ?? { queued: 0, running: 0, succeeded: 0, failed: 0 },
    ...(backlog ? { backlog: backlogView(backlog) } : {}),
  };
}

/**
 * Per job: configuration, next and last run, the last day's runs by state, and the backlog of a job
 * that drains a queue of its own; per queue: the running
 * instances consuming it and its running and queued runs; and the jobs whose last run failed.
 */
export async function describeJobs(deps: JobsServiceDeps): Promise<OverviewBody> {
  const jobs = deps.jobs.list();
  const names = jobs.map((job) => job.name);
  const { rows, lastRuns, recent, load, consumers, backlogs } = await withReadTimeout(deps.pool, deps.queryTimeoutMs, async (tx) => {
    const backlogs = new Map<string, JobBacklog>();
    for (const job of jobs) {
      if (job.backlog) {
        backlogs.set(job.name, await job.backlog(tx));
      }
    }
    return {
      rows: await selectDefinitionRows(tx, names),
      lastRuns: await selectLastRuns(tx, names),
      recent: await selectRecentCounts(tx),
      load: await selectQueueLoad(tx),
      consumers: await selectLiveConsumers(tx),
      backlogs,
    };
  });

  const counts = new Map<string, Counts>();
  for (const { job, state, count } of recent) {
    const entry = counts.get(job) ?? { queued: 0, running: 0, succeeded: 0, failed: 0 };
    entry[state] = count;
    counts.set(job, entry);
  }
  const entries = jobs.map((job, index) =>
    jobEntry(
      job,
      rows[index]!,
      lastRuns.find((run) => run.job === job.name),
      counts.get(job.name),
      backlogs.get(job.name),
    ),
  );

  const queueNames = new Set([...jobs.map((job) => job.queue), ...consumers.flatMap((c) => c.queues), ...load.map((l) => l.queue)]);
  const queues = [...queueNames].sort().map((name) => {
    const consuming = consumers.filter((consumer) => consumer.queues.includes(name));
    const count = (state: 'queued' | 'running') => load.find((l) => l.queue === name && l.state === state)?.count ?? 0;
    return {
      name,
      instances: consuming.map((consumer) => consumer.instance_id),
      workers: consuming.reduce((sum, consumer) => sum + consumer.workers, 0),
      running: count('running'),
      queued: count('queued'),
    };
  });

  return {
    generated_at: (rows[0]?.db_now ?? new Date()).toISOString(),
    jobs: entries,
    queues,
    failing: entries.filter((entry) => entry.last_run?.state === 'failed'),
  };
}
