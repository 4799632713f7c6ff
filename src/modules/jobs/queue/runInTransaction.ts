import type pg from 'pg';

/**
 * Runs work in a transaction on its own connection. Aborted before the work settles, the
 * connection is destroyed rather than rolled back: the server ends the transaction, and a handler
 * that goes on writing after the abort fails instead of writing outside the transaction.
 */
export async function runInTransaction<T>(pool: pg.Pool, signal: AbortSignal, work: (tx: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let released = false;
  const release = (destroy: boolean) => {
    if (!released) {
      released = true;
      client.release(destroy);
    }
  };
  const onAbort = () => release(true);
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    if (signal.aborted) {
      throw signal.reason;
    }
    await client.query('begin');
    let result: T;
    try {
      result = await work(client);
    } finally {
      // From here the commit decides: an abort no longer cuts the connection under it.
      signal.removeEventListener('abort', onAbort);
    }
    if (released) {
      throw signal.reason;
    }
    await client.query('commit');
    release(false);
    return result;
  } catch (error) {
    if (!released) {
      await client.query('rollback').then(
        () => release(false),
        () => release(true),
      );
    }
    throw released && signal.aborted ? signal.reason : error;
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}
