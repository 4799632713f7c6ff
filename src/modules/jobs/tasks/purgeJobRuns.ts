import { purgeInBatches, type PurgeInput, type PurgeResult } from '../../../platform/db/batchedDelete.ts';
import { purgeFinishedRuns } from '../store/purge.ts';

/** Retention of finished job runs (ops.history_retention); queued and running runs stay. */
export function purgeJobRuns(input: PurgeInput): Promise<PurgeResult> {
  return purgeInBatches(input, purgeFinishedRuns);
}
