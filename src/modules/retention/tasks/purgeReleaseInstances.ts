import { purgeReleaseInstances as purgeBatch } from '../../releases/purge.ts';
import { type PurgeInput, type PurgeResult, deleteInBatches, runPurge } from './batches.ts';

/** Retention of release instance records stopped or unseen (releases.instance_retention). */
export function purgeReleaseInstances(input: PurgeInput): Promise<PurgeResult> {
  return runPurge(input, (client, cutoff, meter) => deleteInBatches(meter, input.batch, (size) => purgeBatch(client, cutoff, size)));
}
