import type { AgingTarget } from '../../platform/db/aging.ts';
import type { BatchBounds, PurgeResult } from '../../platform/db/batchedDelete.ts';
import { settlePurged } from '../../platform/db/purgeLedger.ts';
import { withTransaction } from '../../platform/db/transaction.ts';
import { type JobContext, type JobDefinition, defineJob } from '../../platform/jobs.ts';
import { jobEnabled } from '../jobs/index.ts';
import { RetentionRunError } from './errors.ts';
import { RETENTION_JOB, orderTargets } from './kinds.ts';
import type { RetentionJobDeps, RetentionPurged } from './ports.ts';
import { selectCutoffs } from './store.ts';

/** Batches start at 20 000 rows (~60 ms under load) and resize to keep each statement near 100 ms, far under the 250 ms bound. */
export const DEFAULT_BATCH_BOUNDS: BatchBounds = { initial: 20_000, min: 500, max: 50_000, targetMs: 100 };

const codeOf = (error: unknown): string => {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : 'error';
};

type Outcome = { result: PurgeResult } | { error: unknown };

/** Purges one kind on a worker thread; a task that fails comes back as its error. */
async function purgeKind(deps: RetentionJobDeps, context: JobContext, target: AgingTarget, cutoff: Date): Promise<Outcome> {
  try {
    const input = {
      connectionString: deps.connectionString,
      cutoff: cutoff.toISOString(),
      batch: deps.batch ?? DEFAULT_BATCH_BOUNDS,
      ledger: { kind: target.kind, runId: context.run.id },
      ...(deps.purgeConnections ? { connections: deps.purgeConnections } : {}),
    };
    return { result: await context.runTask(target.task, input) };
  } catch (error) {
    return { error };
  }
}

const NOTHING_DONE: PurgeResult = { deleted: 0, statements: 0, longestStatementMs: 0, longestStatement: '', partitionsDropped: 0, failure: null };

/**
 * Records the kind's `retention.purged` event from the purge ledger, in the transaction that
 * empties the ledger of the kind: every committed batch is reported once, including those of an
 * earlier attempt or run that died before reporting them.
 */
async function settleKind(deps: RetentionJobDeps, target: AgingTarget, seconds: number, cutoff: Date, result: PurgeResult): Promise<RetentionPurged> {
  return withTransaction(deps.pool, async (tx) => {
    const settled = await settlePurged(tx, target.kind);
    const purged: RetentionPurged = {
      kind: target.kind,
      setting: target.setting,
      retentionSeconds: seconds,
      cutoff,
      ...result,
      deleted: settled.rows,
      partitionsDropped: settled.partitionsDropped,
      // Another attempt reporting at the same moment may have taken some of this one's rows.
      earlierDeleted: Math.max(0, settled.rows - result.deleted),
    };
    if (purged.deleted > 0) {
      await deps.recordPurge(tx, purged);
    }
    return purged;
  });
}

/** Logs a kind's purge and records its `retention.purged` event; returns the failure's code, if any. */
async function reportKind(
  deps: RetentionJobDeps,
  context: JobContext,
  target: AgingTarget,
  seconds: number,
  cutoff: Date,
  outcome: Outcome,
): Promise<string | undefined> {
  let failure: string | undefined;
  if ('error' in outcome) {
    context.logger.error({ err: outcome.error, kind: target.kind }, 'retention of a kind failed; the other kinds went on');
    failure = codeOf(outcome.error);
  }
  const result = 'result' in outcome ? outcome.result : NOTHING_DONE;
  failure ??= result.failure?.code;
  let purged: RetentionPurged;
  try {
    purged = await settleKind(deps, target, seconds, cutoff, result);
  } catch (error) {
    context.logger.error(
      { err: error, kind: target.kind, result },
      'rows were deleted but their retention.purged event could not be recorded; the next attempt or run records them',
    );
    return failure ?? 'audit_failed';
  }
  if (purged.failure) {
    context.logger.error({ purged }, 'retention of a kind stopped part-way; the other kinds went on');
  } else if (!('error' in outcome)) {
    context.logger.info({ purged }, 'retention applied');
  }
  return failure;
}

/**
 * One run: keeps audit partitions ahead, then purges the kinds one after the other against
 * cutoffs taken from the live settings on the database clock at the start. One kind at a time
 * keeps a single purge statement beside the service's own queries. A failing kind does not stop
 * the others; the run fails afterwards, naming it. Disabled, it deletes nothing, even in a run
 * queued before the change, and disabled during a run it stops before the next kind.
 */
async function applyRetention(deps: RetentionJobDeps, targets: readonly AgingTarget[], context: JobContext): Promise<void> {
  if (!(await jobEnabled(context.db, RETENTION_JOB))) {
    context.logger.info('the retention job is disabled; nothing deleted');
    return;
  }
  const failures: string[] = [];
  const seconds = targets.map((target) => deps.settings.seconds(target.setting));
  const [upkeep, cutoffs] = await Promise.all([
    deps.ensureAuditEventPartitions().then(
      (created) => ({ created }),
      (error: unknown) => ({ error }),
    ),
    selectCutoffs(context.db, seconds),
  ]);
  if ('error' in upkeep) {
    context.logger.error({ err: upkeep.error }, 'could not create audit event partitions ahead; new months go to the default partition meanwhile');
    failures.push(`audit_event_partitions (${codeOf(upkeep.error)})`);
  } else if (upkeep.created > 0) {
    context.logger.info({ created: upkeep.created }, 'audit event partitions created ahead');
  }
  // A kind's event is recorded while the next kind purges; its failure is counted all the same.
  const reports: Array<Promise<string | undefined>> = [];
  for (const [index, target] of targets.entries()) {
    if (index > 0 && !(await jobEnabled(context.db, RETENTION_JOB))) {
      context.logger.warn({ next_kind: target.kind }, 'the retention job was disabled during its run; the remaining kinds are left');
      break;
    }
    const outcome = await purgeKind(deps, context, target, cutoffs[index]!);
    if (context.signal.aborted) {
      return;
    }
    reports.push(reportKind(deps, context, target, seconds[index]!, cutoffs[index]!, outcome).then((failure) => failure && `${target.kind} (${failure})`));
  }
  for (const failure of await Promise.all(reports)) {
    if (failure) {
      failures.push(failure);
    }
  }
  if (failures.length > 0) {
    throw new RetentionRunError(failures, targets.length + 1);
  }
}

/** The daily retention job (04:15 UTC): 30 minutes per attempt, 3 attempts. */
export function retentionJob(deps: RetentionJobDeps): JobDefinition {
  const targets = orderTargets(deps.targets);
  return defineJob({
    name: RETENTION_JOB,
    description:
      'Deletes audit events, settings and job definition history, finished job runs and release instance records older than their retention settings',
    schedule: '15 4 * * *',
    // Windows are counted in days and a run scans five tables: more often than every 5 minutes only adds load.
    minIntervalSeconds: 300,
    timeoutSeconds: 1_800,
    maxAttempts: 3,
    handler: (context) => applyRetention(deps, targets, context),
  });
}
