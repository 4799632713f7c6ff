import { purgeInBatches, type PurgeInput, type PurgeResult } from '../../../platform/db/batchedDelete.ts';
import { purgeSettingsHistory as purgeBatch } from '../purge.ts';

/** Retention of settings history (ops.history_retention). */
export function purgeSettingsHistory(input: PurgeInput): Promise<PurgeResult> {
  return purgeInBatches(input, purgeBatch);
}
