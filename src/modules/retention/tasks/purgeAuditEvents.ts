import type pg from 'pg';
import { PG, pgCode } from '../../../platform/db/pgErrors.ts';
import { sleep } from '../../../platform/time.ts';
import {
  detachAuditPartition,
  dropAuditPartition,
  lockAndCountAuditPartition,
  purgeAuditEventBatch,
  selectDetachedAuditPartitions,
  selectExpiredAuditPartitions,
} from '../../audit/purge.ts';
import { type PurgeInput, type PurgeMeter, type PurgeResult, deleteInBatches, openPurgeConnection, runPurge } from './batches.ts';

// Detaching a month locks all of audit_events: wait briefly for the lock, or not at all.
const DETACH_LOCK_TIMEOUT = '100ms';
const DETACH_ATTEMPTS = 3;
const DETACH_RETRY_MS = 200;

async function inTransaction<T>(client: pg.ClientBase, work: () => Promise<T>): Promise<T> {
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

interface MonthDropper {
  drop(name: string): void;
  /** Waits for the queued drops; the first failure stops the rest and is thrown here. */
  finished(): Promise<void>;
}

/**
 * Drops detached months one after another on a connection of its own, while the purge goes on:
 * freeing a month's files takes longer than detaching it, and locks nothing the service uses.
 */
function monthDropper(client: pg.ClientBase, meter: PurgeMeter): MonthDropper {
  let queue: Promise<void> = Promise.resolve();
  let failure: { error: unknown } | undefined;
  return {
    drop(name) {
      queue = queue.then(async () => {
        if (failure) {
          return;
        }
        try {
          await meter.time(`drop ${name}`, () => dropAuditPartition(client, name));
          meter.partitionsDropped += 1;
        } catch (error) {
          failure = { error };
        }
      });
    },
    async finished() {
      await queue;
      if (failure) {
        throw failure.error;
      }
    },
  };
}

/**
 * Takes one expired month out of audit_events, counting its rows first under a lock that stops
 * writes to that month only. The lock on audit_events lasts the detach and the commit. Returns
 * false when that lock is not granted in time: the month stays and the batches empty it.
 */
async function detachExpiredMonth(client: pg.ClientBase, name: string, meter: PurgeMeter): Promise<boolean> {
  for (let attempt = 1; attempt <= DETACH_ATTEMPTS; attempt += 1) {
    await client.query('begin');
    let rows: number;
    try {
      await client.query(`select set_config('lock_timeout', $1, true)`, [DETACH_LOCK_TIMEOUT]);
      rows = (await meter.time(`count ${name}`, () => lockAndCountAuditPartition(client, name))).value;
      await meter.time(`detach ${name}`, async () => {
        await detachAuditPartition(client, name);
        await client.query('commit');
      });
    } catch (error) {
      await client.query('rollback').catch(() => undefined);
      if (pgCode(error) !== PG.lockNotAvailable) {
        throw error;
      }
      if (attempt < DETACH_ATTEMPTS) {
        await sleep(DETACH_RETRY_MS * attempt);
      }
      continue;
    }
    meter.deleted += rows;
    return true;
  }
  return false;
}

/**
 * Retention of audit events: each whole expired month counted and detached (its rows are gone
 * from audit_events at that commit) and dropped on a second connection meanwhile; then the rest
 * (boundary month, default partition) deleted in batches. A month an earlier purge detached but
 * did not drop is dropped now; its rows were counted when it was detached.
 */
export function purgeAuditEvents(input: PurgeInput): Promise<PurgeResult> {
  const dropping = openPurgeConnection(input.connectionString);
  dropping.catch(() => undefined);
  let dropFailed = false;
  const result = runPurge(input, async (client, cutoff, meter) => {
    const dropper = monthDropper((await dropping).client, meter);
    try {
      for (const name of await selectDetachedAuditPartitions(client, cutoff)) {
        dropper.drop(name);
      }
      for (const name of await selectExpiredAuditPartitions(client, cutoff)) {
        if (await detachExpiredMonth(client, name, meter)) {
          dropper.drop(name);
        }
      }
      await deleteInBatches(meter, input.batch, (size) => inTransaction(client, () => purgeAuditEventBatch(client, cutoff, size)));
    } catch (error) {
      dropFailed = await dropper.finished().then(() => false, () => true);
      throw error;
    }
    await dropper.finished().catch((error: unknown) => {
      dropFailed = true;
      throw error;
    });
  });
  return result.finally(() => dropping.then((connection) => connection.release(dropFailed)).catch(() => undefined));
}
