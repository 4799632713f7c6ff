import type pg from 'pg';
import type { Queryable } from './pool.ts';

/** Runs work in one transaction on one connection of the pool, always releasing it. */
export async function withTransaction<T>(pool: pg.Pool, work: (tx: Queryable) => Promise<T>): Promise<T> {
  const client = await pool.connect();
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
export async function transactionOn<T>(client: pg.ClientBase, work: (tx: Queryable) => Promise<T>, onRollbackFailure: () => void = () => undefined): Promise<T> {
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
