import { purgeSettingsHistory as purgeBatch } from '../../settings/purge.ts';
import { type PurgeInput, type PurgeResult, deleteInBatches, runPurge } from './batches.ts';

/** Retention of settings history (ops.history_retention). */
export function purgeSettingsHistory(input: PurgeInput): Promise<PurgeResult> {
  return runPurge(input, (client, cutoff, meter) => deleteInBatches(meter, input.batch, (size) => purgeBatch(client, cutoff, size)));
}
