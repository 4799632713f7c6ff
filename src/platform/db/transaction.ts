import type { Database } from './database.ts';
import type { Queryable } from './pool.ts';

/**
 * Runs work in one transaction on one connection of the database, always releasing it: the change
 * commits whole or not at all. Pass `tx` to every statement of the change, and to `recordAudit`.
 */
export async function withTransaction<T>(database: Database, work: (tx: Queryable) => Promise<T>): Promise<T> {
  const client = await database.connect();
  let broken = false;
  try {
    return await transactionOn(client, work, () => {
      broken = true;
    });
  } finally {
    // A connection whose rollback failed is in an unknown state: it is closed, not reused.
    client.release(broken);
  }
}

/** Runs work in one transaction on a connection the caller holds (a task thread's own client). */
export async function transactionOn<T>(client: Queryable, work: (tx: Queryable) => Promise<T>, onRollbackFailure: () => void = () => undefined): Promise<T> {
  await client.query('begin');
  try {
    const result = await work(client);
    await client.query('commit');
    return result;
  } catch (error) {
    await client.query('rollback').catch(onRollbackFailure);
    throw error;
  }
}
