import { purgeDefinitionHistory } from '../../jobs/store/purge.ts';
import { type PurgeInput, type PurgeResult, deleteInBatches, runPurge } from './batches.ts';

/** Retention of job definition history (ops.history_retention). */
export function purgeJobDefinitionHistory(input: PurgeInput): Promise<PurgeResult> {
  return runPurge(input, (client, cutoff, meter) => deleteInBatches(meter, input.batch, (size) => purgeDefinitionHistory(client, cutoff, size)));
}
