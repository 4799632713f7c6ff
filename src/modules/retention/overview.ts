import type { z } from 'zod';
import type { TargetAge } from '../../platform/db/aging.ts';
import { boundedRead } from '../../platform/db/boundedRead.ts';
import { selectUnreportedPurges } from '../../platform/db/purgeLedger.ts';
import { RetentionError } from './errors.ts';
import { RETENTION_JOB, orderTargets } from './kinds.ts';
import type { RetentionJobStatus, RetentionServiceDeps } from './ports.ts';
import type { RetentionOverview } from './schemas.ts';

const iso = (date: Date | null) => date?.toISOString() ?? null;

/** The job's state and every kind's age, each statement bounded, in one transaction. */
async function readAges(deps: RetentionServiceDeps): Promise<{ job: RetentionJobStatus; ages: TargetAge[]; unreported: Map<string, number> }> {
  const timedOut = (cause: unknown) =>
    new RetentionError('retention_query_timeout', `Counting the rows past their cutoff took longer than ${deps.queryTimeoutMs / 1000} s; try again later.`, {
      cause,
    });
  return boundedRead(deps.pool, deps.queryTimeoutMs, timedOut, async (tx) => {
    const job = await deps.jobStatus(tx);
    const ages: TargetAge[] = [];
    for (const target of orderTargets(deps.targets)) {
      ages.push(await target.age(tx, deps.settings.seconds(target.setting)));
    }
    return { job, ages, unreported: await selectUnreportedPurges(tx) };
  });
}

/** Per kind of data: its setting and live value, the enforcing job, the oldest row, how many rows are past the cutoff and how many deleted ones await their audit event. */
export async function describeRetention(deps: RetentionServiceDeps): Promise<z.infer<typeof RetentionOverview>> {
  const { job, ages, unreported } = await readAges(deps);
  return {
    kinds: orderTargets(deps.targets).map((target, index) => {
      const age = ages[index]!;
      return {
        kind: target.kind,
        setting: target.setting,
        value: deps.settings.text(target.setting),
        value_seconds: deps.settings.seconds(target.setting),
        job: RETENTION_JOB,
        enabled: job.enabled,
        cutoff: age.cutoff.toISOString(),
        oldest: iso(age.oldest),
        past_cutoff: age.pastCutoff,
        past_cutoff_estimated: age.pastCutoffEstimated,
        deleted_unreported: unreported.get(target.kind) ?? 0,
        last_run: job.lastRun
          ? {
              id: job.lastRun.id,
              state: job.lastRun.state,
              started_at: job.lastRun.startedAt.toISOString(),
              finished_at: iso(job.lastRun.finishedAt),
              error: job.lastRun.error,
            }
          : null,
        next_run: iso(job.nextRunAt),
      };
    }),
  };
}
