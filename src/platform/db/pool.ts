import pg from 'pg';

/** Anything that runs a query: the pool, or a client inside a transaction. */
export interface Queryable {
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>>;
}

export interface PoolStats {
  acquires: number;
  /** Acquires that found no idle connection, so had to wait or open one. */
  emptyAcquires: number;
  /** Acquires that failed: timed out, or the connection could not be opened. */
  canceledAcquires: number;
  acquireMsTotal: number;
}

export interface PoolOptions {
  connectionString: string;
  max: number;
  applicationName: string;
  /** Bound on waiting for a connection. */
  acquireTimeoutMs?: number;
  /** Server-side bound on every statement of this pool's connections. */
  statementTimeoutMs?: number;
  /** How long an unused connection stays open; 0 keeps it (30 s by default). */
  idleTimeoutMs?: number;
  /** Server settings for this pool's sessions, sent when each connection opens. */
  sessionSettings?: Record<string, string>;
}

export interface InstrumentedPool extends pg.Pool {
  readonly stats: PoolStats;
}

type ConnectCallback = (err: Error | undefined, client: pg.PoolClient | undefined, done: (release?: unknown) => void) => void;

/**
 * A pg pool whose every checkout (including the ones pool.query makes) is counted and timed,
 * for /ops/system and the pool metrics.
 */
export function createPool(options: PoolOptions): InstrumentedPool {
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.max,
    application_name: options.applicationName,
    connectionTimeoutMillis: options.acquireTimeoutMs ?? 5_000,
    idleTimeoutMillis: options.idleTimeoutMs ?? 30_000,
    ...(options.statementTimeoutMs ? { statement_timeout: options.statementTimeoutMs } : {}),
    ...(options.sessionSettings
      ? { options: Object.entries(options.sessionSettings).map(([name, value]) => `-c ${name}=${value}`).join(' ') }
      : {}),
  });
  const stats: PoolStats = { acquires: 0, emptyAcquires: 0, canceledAcquires: 0, acquireMsTotal: 0 };
  // A connection that dies while idle must not crash the process; the pool drops it.
  pool.on('error', () => undefined);
  const connect = pool.connect.bind(pool) as (callback: ConnectCallback) => void;

  const instrumented = (callback?: ConnectCallback): Promise<pg.PoolClient> | undefined => {
    const started = performance.now();
    stats.acquires += 1;
    if (pool.idleCount === 0) {
      stats.emptyAcquires += 1;
    }
    const settle: ConnectCallback = (err, client, done) => {
      stats.acquireMsTotal += performance.now() - started;
      if (err) {
        stats.canceledAcquires += 1;
      }
      callback?.(err, client, done);
    };
    if (callback) {
      connect(settle);
      return undefined;
    }
    return new Promise((resolve, reject) => {
      connect((err, client, done) => {
        settle(err, client, done);
        if (err || !client) {
          reject(err ?? new Error('no client'));
        } else {
          resolve(client);
        }
      });
    });
  };
  (pool as unknown as { connect: typeof instrumented }).connect = instrumented;
  return Object.assign(pool, { stats });
}
