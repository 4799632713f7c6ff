import type { Queryable } from '../../../platform/db/pool.ts';

/** A consumer not seen for this long has stopped (crashed, or cut off from the database). */
export const CONSUMER_STALE_SECONDS = 15;

const upsertConsumerSql = `
insert into job_consumers (instance_id, queues, workers) values ($1, $2, $3)
on conflict (instance_id) do update set queues = excluded.queues, workers = excluded.workers, seen_at = now()`;

/** Announces (and re-announces, on each beat) the queues this instance consumes. */
export async function upsertConsumer(db: Queryable, instanceId: string, queues: string[], workers: number): Promise<void> {
  await db.query(upsertConsumerSql, [instanceId, queues, workers]);
}

const deleteConsumerSql = `delete from job_consumers where instance_id = $1`;

export async function deleteConsumer(db: Queryable, instanceId: string): Promise<void> {
  await db.query(deleteConsumerSql, [instanceId]);
}

// Consumers long gone are forgotten; those merely stale stay out of the overview until they beat again.
const deleteStaleConsumersSql = `delete from job_consumers where seen_at < now() - interval '1 day'`;

export async function deleteStaleConsumers(db: Queryable): Promise<void> {
  await db.query(deleteStaleConsumersSql);
}
