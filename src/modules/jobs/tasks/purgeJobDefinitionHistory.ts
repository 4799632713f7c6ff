import { purgeInBatches, type PurgeInput, type PurgeResult } from '../../../platform/db/batchedDelete.ts';
import { purgeDefinitionHistory } from '../store/purge.ts';

/** Retention of job definition history (ops.history_retention). */
export function purgeJobDefinitionHistory(input: PurgeInput): Promise<PurgeResult> {
  return purgeInBatches(input, purgeDefinitionHistory);
}
