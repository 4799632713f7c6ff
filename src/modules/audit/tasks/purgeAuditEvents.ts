import type pg from 'pg';
import { type PurgeConnection, type PurgeInput, type PurgeMeter, type PurgeResult, deleteInBatches, openPurgeConnection, runPurge } from '../../../platform/db/batchedDelete.ts';
import { PG, pgCode } from '../../../platform/db/pgErrors.ts';
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

// Detaching a month locks all of audit_events: wait briefly for the lock, or not at all.
const DETACH_LOCK_TIMEOUT = '100ms';
const DETACH_ATTEMPTS = 3;
const DETACH_RETRY_MS = 200;
// Counting and dropping a month takes ten times as long as detaching it: two connections keep up.
const DROP_CONNECTIONS = 2;

interface MonthDroppers {
  drop(name: string): void;
  /** Waits for the queued drops; the first failure stops the rest and is thrown here. */
  finished(): Promise<void>;
}

/**
 * Counts and drops detached months on connections of their own, while the purge goes on. A
 * month's rows are counted in the transaction that drops it, so a month left detached by a
 * purge that stopped is counted by the purge that drops it, once.
 */
function monthDroppers(clients: Array<Promise<pg.ClientBase>>, meter: PurgeMeter): MonthDroppers {
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
 * that commit), counted and dropped on two more connections meanwhile; then the rest (boundary
 * month, default partition) deleted in batches. A month an earlier purge detached and did not
 * drop is counted and dropped now.
 */
export function purgeAuditEvents(input: PurgeInput): Promise<PurgeResult> {
  const dropping = Array.from({ length: DROP_CONNECTIONS }, () => openPurgeConnection(input.connectionString));
  dropping.forEach((connection) => connection.catch(() => undefined));
  let dropFailed = false;
  const result = runPurge(input, async (client, cutoff, meter) => {
    // The first detach does not wait for the droppers' connections.
    const droppers = monthDroppers(
      dropping.map((connection) => connection.then((opened) => opened.client)),
      meter,
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
      await deleteInBatches(meter, input.batch, (size) => transactionOn(client, () => purgeAuditEventBatch(client, cutoff, size)));
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
