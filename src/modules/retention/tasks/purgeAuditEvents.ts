import type pg from 'pg';
import { PG, pgCode } from '../../../platform/db/pgErrors.ts';
import { sleep } from '../../../platform/time.ts';
import { dropAuditPartition, lockAndCountAuditPartition, purgeAuditEventBatch, selectExpiredAuditPartitions } from '../../audit/purge.ts';
import { type PurgeInput, type PurgeMeter, type PurgeResult, deleteInBatches, runPurge } from './batches.ts';

// Dropping a partition locks all of audit_events: wait briefly for the lock, or not at all.
const DROP_LOCK_TIMEOUT = '100ms';
const DROP_ATTEMPTS = 3;
const DROP_RETRY_MS = 200;

async function inTransaction<T>(client: pg.Client, work: () => Promise<T>): Promise<T> {
  await client.query('begin');
  try {
    const result = await work();
    await client.query('commit');
    return result;
  } catch (error) {
    await client.query('rollback').catch(() => undefined);
    throw error;
  }
}

/**
 * Drops each whole month older than the cutoff, one per transaction, counting its rows first. A
 * partition whose lock is not granted in time stays; the batched delete then empties it instead.
 */
async function dropExpiredPartitions(client: pg.Client, cutoff: Date, meter: PurgeMeter): Promise<void> {
  for (const name of await selectExpiredAuditPartitions(client, cutoff)) {
    for (let attempt = 1; attempt <= DROP_ATTEMPTS; attempt += 1) {
      await client.query('begin');
      let rows: number;
      try {
        await client.query(`select set_config('lock_timeout', $1, true)`, [DROP_LOCK_TIMEOUT]);
        rows = (await meter.time(`count ${name}`, () => lockAndCountAuditPartition(client, name))).value;
        // The drop holds its lock on audit_events until the commit, so both are timed together.
        await meter.time(`drop ${name}`, async () => {
          await dropAuditPartition(client, name);
          await client.query('commit');
        });
      } catch (error) {
        await client.query('rollback').catch(() => undefined);
        if (pgCode(error) !== PG.lockNotAvailable) {
          throw error;
        }
        if (attempt < DROP_ATTEMPTS) {
          await sleep(DROP_RETRY_MS * attempt);
        }
        continue;
      }
      meter.deleted += rows;
      meter.partitionsDropped += 1;
      break;
    }
  }
}

/** Retention of audit events: whole expired months dropped, then the rest (boundary month, default partition) in batches. */
export function purgeAuditEvents(input: PurgeInput): Promise<PurgeResult> {
  return runPurge(input, async (client, cutoff, meter) => {
    await dropExpiredPartitions(client, cutoff, meter);
    await deleteInBatches(meter, input.batch, (size) => inTransaction(client, () => purgeAuditEventBatch(client, cutoff, size)));
  });
}
