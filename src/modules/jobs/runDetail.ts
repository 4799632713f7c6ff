import type { z } from 'zod';
import { JobsError } from './errors.ts';
import type { JobsServiceDeps } from './ports.ts';
import { withReadTimeout } from './readTimeout.ts';
import type { RunDetail } from './schemas.ts';
import { type AttemptRow, selectAttempts, selectRun } from './store/attempts.ts';
import { durationMs, iso, runView } from './views.ts';

export const runNotFound = (id: string) => new JobsError('job_run_not_found', `No job run has the id ${id}.`);

function attemptView(row: AttemptRow) {
  return {
    attempt: row.attempt,
    instance_id: row.instance_id,
    started_at: row.started_at.toISOString(),
    finished_at: iso(row.finished_at),
    duration_ms: durationMs(row.started_at, row.finished_at),
    outcome: row.outcome,
    error: row.error,
  };
}

/** A run and each of its attempts: where it ran, how long, and why it failed. */
export async function describeRun(deps: JobsServiceDeps, id: string): Promise<z.infer<typeof RunDetail>> {
  const found = await withReadTimeout(deps.pool, deps.queryTimeoutMs, async (tx) => {
    const run = await selectRun(tx, id);
    return run && { run, attempts: await selectAttempts(tx, id) };
  });
  if (!found) {
    throw runNotFound(id);
  }
  return { run: runView(found.run), attempts: found.attempts.map(attemptView) };
}
