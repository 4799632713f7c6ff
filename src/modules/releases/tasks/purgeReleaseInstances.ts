import { purgeInBatches, type PurgeInput, type PurgeResult } from '../../../platform/db/batchedDelete.ts';
import { purgeReleaseInstances as purgeBatch } from '../purge.ts';

/** Retention of release instance records stopped or unseen (releases.instance_retention). */
export function purgeReleaseInstances(input: PurgeInput): Promise<PurgeResult> {
  return purgeInBatches(input, purgeBatch);
}
