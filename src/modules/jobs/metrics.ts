import client from 'prom-client';
import type { Queryable } from '../../platform/db/pool.ts';
import { labelSets, zeroCounter } from '../../platform/metrics/zero.ts';
import { withTimeout } from '../../platform/time.ts';
import { type LastFinishRow, selectLastFinishes } from './store/reads.ts';

const ATTEMPT_OUTCOMES = ['succeeded', 'retrying', 'failed', 'released', 'lost'] as const;

export interface JobMetrics {
  /** One attempt ended: succeeded, retrying, failed, released (drain) or lost (taken over). */
  attemptEnded(job: string, outcome: (typeof ATTEMPT_OUTCOMES)[number], seconds: number): void;
}

/** Labelled `job_name`, never `job`: Prometheus's own target label (ADR 0126). Every known job starts at 0. */
export function createJobMetrics(registry: client.Registry, jobs: readonly string[] = []): JobMetrics {
  const attempts = new client.Counter({
    name: 'backplane_job_attempts_total',
    help: 'Job attempts this instance ran, by job and how they ended',
    labelNames: ['job_name', 'outcome'],
    registers: [registry],
  });
  zeroCounter(attempts, labelSets({ job_name: jobs, outcome: ATTEMPT_OUTCOMES }));
  const duration = new client.Histogram({
    name: 'backplane_job_attempt_duration_seconds',
    help: 'Duration of job attempts this instance ran, by job',
    labelNames: ['job_name'],
    buckets: [0.01, 0.05, 0.25, 1, 5, 15, 60, 300, 1800],
    registers: [registry],
  });
  jobs.forEach((job) => duration.zero({ job_name: job }));
  return {
    attemptEnded(job, outcome, seconds) {
      attempts.inc({ job_name: job, outcome });
      duration.observe({ job_name: job }, seconds);
    },
  };
}

/**
 * Each job's latest success and failure as the database holds them (read at each scrape, so every
 * instance reports the cluster's truth, whichever instance ran the job and across restarts: take
 * max, not sum). A job with no such run among its last 1000 has no series.
 */
export function registerJobTimestampMetrics(registry: client.Registry, db: Queryable, jobs: () => string[]): void {
  let last: LastFinishRow[] = [];
  let reading: Promise<void> | undefined;
  // Both gauges are collected side by side during a scrape: they share one read.
  const refresh = () =>
    (reading ??= read().finally(() => {
      reading = undefined;
    }));
  const read = async () => {
    try {
      last = await withTimeout(selectLastFinishes(db, jobs()), 1_000);
    } catch {
      // An unreachable database keeps the last figures; readiness reports the outage.
    }
  };
  const gauge = (name: string, help: string, pick: (row: LastFinishRow) => Date | null) =>
    new client.Gauge({
      name,
      help,
      labelNames: ['job_name'],
      registers: [registry],
      async collect() {
        await refresh();
        this.reset();
        for (const row of last) {
          const at = pick(row);
          if (at) {
            this.set({ job_name: row.job }, at.getTime() / 1000);
          }
        }
      },
    });
  gauge(
    'backplane_job_last_success_timestamp_seconds',
    "When the job's latest successful run finished (Unix seconds), cluster-wide",
    (row) => row.last_success,
  );
  gauge('backplane_job_last_failure_timestamp_seconds', "When the job's latest failed run finished (Unix seconds), cluster-wide", (row) => row.last_failure);
}
