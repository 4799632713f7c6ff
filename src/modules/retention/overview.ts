import type { z } from 'zod';
import { PG, pgCode } from '../../platform/db/pgErrors.ts';
import { withTransaction } from '../../platform/db/transaction.ts';
import { RetentionError } from './errors.ts';
import { RETENTION_JOB, RETENTION_KINDS } from './kinds.ts';
import type { RetentionServiceDeps } from './ports.ts';
import type { RetentionOverview } from './schemas.ts';
import { type KindAge, setStatementTimeout } from './store.ts';

const iso = (date: Date | null) => date?.toISOString() ?? null;

async function kindAges(deps: RetentionServiceDeps): Promise<KindAge[]> {
  try {
    return await withTransaction(deps.pool, async (tx) => {
      await setStatementTimeout(tx, deps.queryTimeoutMs);
      const ages: KindAge[] = [];
      for (const kind of RETENTION_KINDS) {
        ages.push(await kind.describe(tx, deps.settings.seconds(kind.setting)));
      }
      return ages;
    });
  } catch (error) {
    if (pgCode(error) === PG.queryCanceled) {
      throw new RetentionError('retention_query_timeout', `Counting the rows past their cutoff took longer than ${deps.queryTimeoutMs / 1000} s; try again later.`, {
        cause: error,
      });
    }
    throw error;
  }
}

/** Per kind of data: its setting and live value, the enforcing job, the oldest row and how many rows are past the cutoff. */
export async function describeRetention(deps: RetentionServiceDeps): Promise<z.infer<typeof RetentionOverview>> {
  const job = await deps.jobStatus();
  const ages = await kindAges(deps);
  return {
    kinds: RETENTION_KINDS.map((kind, index) => {
      const age = ages[index]!;
      return {
        kind: kind.kind,
        setting: kind.setting,
        value: deps.settings.text(kind.setting),
        value_seconds: deps.settings.seconds(kind.setting),
        job: RETENTION_JOB,
        enabled: job.enabled,
        cutoff: age.cutoff.toISOString(),
        oldest: iso(age.oldest),
        past_cutoff: age.pastCutoff,
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
