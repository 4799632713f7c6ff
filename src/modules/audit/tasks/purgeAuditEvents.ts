import type pg from 'pg';
import {
  DEFAULT_PURGE_CONNECTIONS,
  type PurgeConnection,
  type PurgeInput,
  type PurgeMeter,
  type PurgeResult,
  deleteInBatches,
  openPurgeConnection,
  runPurge,
} from '../../../platform/db/batchedDelete.ts';
import { PG, pgCode } from '../../../platform/db/pgErrors.ts';
import { type PurgeLedgerKey, recordPurged } from '../../../platform/db/purgeLedger.ts';
import { transactionOn } from '../../../platform/db/transaction.ts';
import { sleep } from '../../../platform/time.ts';
import {
  countAuditPartition,
  detachAuditPartition,
  dropAuditPartition,
  purgeAuditEventBatch,
  selectDetachedAuditPartitions,
  selectExpiredAuditPartitions,
} from '../purge.ts';
import { subtractAuditPartitionFromRollup } from '../rollupMaintenance.ts';

// Detaching a month locks all of audit_events: wait briefly for the lock, or not at all.
const DETACH_LOCK_TIMEOUT = '100ms';
const DETACH_ATTEMPTS = 3;
const DETACH_RETRY_MS = 200;

interface MonthDroppers {
  drop(name: string): void;
  /** Waits for the queued drops; the first failure stops the rest and is thrown here. */
  finished(): Promise<void>;
}

/**
 * Counts and drops detached months on connections of their own, while the purge goes on. A
 * month's rows are counted, noted in the purge ledger and dropped in one transaction, so a month
 * left detached by a purge that stopped is counted by the purge that drops it, once.
 */
function monthDroppers(clients: Array<Promise<pg.ClientBase>>, meter: PurgeMeter, ledger: PurgeLedgerKey): MonthDroppers {
  const queues = clients.map(() => Promise.resolve());
  let next = 0;
  let failure: { error: unknown } | undefined;
  return {
    drop(name) {
      const index = next++ % clients.length;
      queues[index] = queues[index]!.then(async () => {
        if (failure) {
          return;
        }
        try {
          const client = await clients[index]!;
          // Both lock only the detached table; the drop holds its lock until the commit.
          await client.query('begin');
          let rows: number;
          try {
            rows = (await meter.time(`count ${name}`, () => countAuditPartition(client, name))).value;
            await meter.time(`drop ${name}`, async () => {
              await recordPurged(client, ledger, rows, 1);
              await dropAuditPartition(client, name);
              await client.query('commit');
            });
          } catch (error) {
            await client.query('rollback').catch(() => undefined);
            throw error;
          }
          meter.deleted += rows;
          meter.partitionsDropped += 1;
        } catch (error) {
          failure ??= { error };
        }
      });
    },
    async finished() {
      await Promise.all(queues);
      if (failure) {
        throw failure.error;
      }
    },
  };
}

/**
 * Takes one expired month out of audit_events; the lock on audit_events lasts the detach and its
 * commit. Returns false when that lock is not granted in time: the month stays and the batches
 * empty it instead.
 */
async function detachExpiredMonth(client: pg.ClientBase, name: string, meter: PurgeMeter): Promise<boolean> {
  for (let attempt = 1; attempt <= DETACH_ATTEMPTS; attempt += 1) {
    try {
      await meter.time(`detach ${name}`, () =>
        transactionOn(client, async () => {
          await client.query(`select set_config('lock_timeout', $1, true)`, [DETACH_LOCK_TIMEOUT]);
          await detachAuditPartition(client, name);
          // Its events leave the statistics with it, in the same commit.
          await subtractAuditPartitionFromRollup(client, name);
        }),
      );
      return true;
    } catch (error) {
      if (pgCode(error) !== PG.lockNotAvailable) {
        throw error;
      }
      if (attempt < DETACH_ATTEMPTS) {
        await sleep(DETACH_RETRY_MS * attempt);
      }
    }
  }
  return false;
}

/**
 * Retention of audit events: each whole expired month detached (its rows leave audit_events at
 * that commit), counted and dropped on the purge's other connections meanwhile; then the rest (boundary
 * month, default partition) deleted in batches. A month an earlier purge detached and did not
 * drop is counted and dropped now. Every batch and month commits its count in the purge ledger.
 */
export function purgeAuditEvents(input: PurgeInput): Promise<PurgeResult> {
  // Counting and dropping a month takes ten times as long as detaching it: the purge's other connections do it.
  const dropping = Array.from({ length: (input.connections ?? DEFAULT_PURGE_CONNECTIONS) - 1 }, () => openPurgeConnection(input));
  dropping.forEach((connection) => connection.catch(() => undefined));
  let dropFailed = false;
  const result = runPurge(input, async (client, cutoff, meter) => {
    // The first detach does not wait for the droppers' connections.
    const droppers = monthDroppers(
      dropping.map((connection) => connection.then((opened) => opened.client)),
      meter,
      input.ledger,
    );
    try {
      for (const name of await selectDetachedAuditPartitions(client, cutoff)) {
        droppers.drop(name);
      }
      for (const name of await selectExpiredAuditPartitions(client, cutoff)) {
        if (await detachExpiredMonth(client, name, meter)) {
          droppers.drop(name);
        }
      }
      await deleteInBatches(meter, input.batch, (size) =>
        transactionOn(client, async () => {
          const deleted = await purgeAuditEventBatch(client, cutoff, size);
          await recordPurged(client, input.ledger, deleted);
          return deleted;
        }),
      );
    } catch (error) {
      dropFailed = await droppers.finished().then(
        () => false,
        () => true,
      );
      throw error;
    }
    await droppers.finished().catch((error: unknown) => {
      dropFailed = true;
      throw error;
    });
  });
  const release = (connection: Promise<PurgeConnection>) => connection.then((opened) => opened.release(dropFailed)).catch(() => undefined);
  return result.finally(() => Promise.all(dropping.map(release)));
}
