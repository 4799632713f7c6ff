import client from 'prom-client';

export interface JobMetrics {
  /** One attempt ended: succeeded, retrying, failed, released (drain) or lost (taken over). */
  attemptEnded(job: string, outcome: 'succeeded' | 'retrying' | 'failed' | 'released' | 'lost', seconds: number): void;
}

export function createJobMetrics(registry: client.Registry): JobMetrics {
  const attempts = new client.Counter({
    name: 'backplane_job_attempts_total',
    help: 'Job attempts this instance ran, by job and how they ended',
    labelNames: ['job', 'outcome'],
    registers: [registry],
  });
  const duration = new client.Histogram({
    name: 'backplane_job_attempt_duration_seconds',
    help: 'Duration of job attempts this instance ran, by job',
    labelNames: ['job'],
    buckets: [0.01, 0.05, 0.25, 1, 5, 15, 60, 300, 1800],
    registers: [registry],
  });
  return {
    attemptEnded(job, outcome, seconds) {
      attempts.inc({ job, outcome });
      duration.observe({ job }, seconds);
    },
  };
}
