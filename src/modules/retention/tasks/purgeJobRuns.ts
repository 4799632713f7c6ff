import { purgeFinishedRuns } from '../../jobs/store/purge.ts';
import { type PurgeInput, type PurgeResult, deleteInBatches, runPurge } from './batches.ts';

/** Retention of finished job runs (ops.history_retention); queued and running runs stay. */
export function purgeJobRuns(input: PurgeInput): Promise<PurgeResult> {
  return runPurge(input, (client, cutoff, meter) => deleteInBatches(meter, input.batch, (size) => purgeFinishedRuns(client, cutoff, size)));
}
