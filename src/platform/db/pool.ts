import pg from 'pg';
import { type DatabaseDeadline, DatabaseUnavailableError, currentDatabaseDeadline } from './deadline.ts';

/** Anything that runs a query: the pool, or a client inside a transaction. */
export interface Queryable {
  /** Runs one statement with `$n` parameters; `R` names the row's columns. */
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>>;
}

/** How the pool's connections were taken since it started. */
export interface PoolStats {
  /** Connections taken. */
  acquires: number;
  /** Acquires that found no idle connection, so had to wait or open one. */
  emptyAcquires: number;
  /** Acquires that failed: timed out, or the connection could not be opened. */
  canceledAcquires: number;
  /** Time spent taking connections, in total. */
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
  /**
   * `transaction`: the connection string names a transaction pooler (PgBouncer 1.18, ADR 0092):
   * statements go unnamed and nothing is set per session, so the statement timeout and session
   * settings above are not sent.
   */
  pooling?: 'session' | 'transaction';
}

/** A pool of pg's that counts how its connections are taken (a test database's `pool` is one). */
export interface InstrumentedPool extends pg.Pool {
  /** The counts so far. */
  readonly stats: PoolStats;
}

type ConnectCallback = (err: Error | undefined, client: pg.PoolClient | undefined, done: (release?: unknown) => void) => void;

type QueryCallback = (err: Error | null, result?: unknown) => void;

const deadlineError = () => new DatabaseUnavailableError('deadline');

/**
 * How long past the deadline a running statement is left before its connection is destroyed: a
 * live server answers its own statement_timeout in that time (a module's bounded read keeps its
 * *_query_timeout code when its bound equals the deadline); a frozen one answers nothing anyway.
 */
export const STATEMENT_GRACE_MS = 1_000;

/**
 * Bounds every statement of a checked-out client by the deadline of its checkout. Past it (and
 * the grace) the connection is destroyed, not returned: a frozen server never answers, and a statement still
 * running there must never land on the next user of the connection nor commit later.
 */
function boundStatements(client: pg.PoolClient, deadlineOf: (client: pg.PoolClient) => DatabaseDeadline | undefined): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  // A destroyed connection reports its end as an error event; the failed statement already says it.
  client.on('error', () => undefined);
  (client as unknown as { query: (...args: unknown[]) => unknown }).query = (config: unknown, values?: unknown, callback?: unknown) => {
    const deadline = deadlineOf(client);
    const submittable = typeof (config as { submit?: unknown } | null)?.submit === 'function';
    if (!deadline || submittable) {
      return query(config, values, callback);
    }
    const done = (typeof values === 'function' ? values : callback) as QueryCallback | undefined;
    const remaining = deadline.remainingMs();
    if (remaining <= 0) {
      if (done) {
        process.nextTick(done, deadlineError());
        return undefined;
      }
      return Promise.reject(deadlineError());
    }
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      // Destroyed with the reason, so every query on it (and pool.query's own error handler) sees it.
      (client as unknown as { connection: { stream: { destroy(error: Error): void } } }).connection.stream.destroy(deadlineError());
    }, remaining + STATEMENT_GRACE_MS);
    const settle = (error: Error | null) => {
      clearTimeout(timer);
      return error && timedOut && !(error instanceof DatabaseUnavailableError) ? new DatabaseUnavailableError('deadline', { cause: error }) : error;
    };
    if (done) {
      const wrapped: QueryCallback = (error, result) => done(settle(error), result);
      return typeof values === 'function' ? query(config, wrapped) : query(config, values, wrapped);
    }
    return (query(config, values) as Promise<unknown>).then(
      (result) => {
        settle(null);
        return result;
      },
      (error: Error) => {
        throw settle(error);
      },
    );
  };
}

/**
 * Sends every statement of a client unnamed: a transaction pooler hands each transaction another
 * server connection, where a statement prepared under a name on an earlier one does not exist.
 */
function forgetStatementNames(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as unknown as { query: (...args: unknown[]) => unknown }).query = (config: unknown, ...rest: unknown[]) => {
    const named = typeof config === 'object' && config !== null && typeof (config as { submit?: unknown }).submit !== 'function' && 'name' in config;
    return query(named ? { ...config, name: undefined } : config, ...rest);
  };
}

/**
 * A pg pool whose every checkout (including the ones pool.query makes) is counted and timed,
 * for /ops/system and the pool metrics. Within a database deadline (withDatabaseDeadline), waiting
 * for a connection and every statement on it are bounded by that deadline.
 */
export function createPool(options: PoolOptions): InstrumentedPool {
  const sessions = options.pooling !== 'transaction';
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.max,
    application_name: options.applicationName,
    connectionTimeoutMillis: options.acquireTimeoutMs ?? 5_000,
    idleTimeoutMillis: options.idleTimeoutMs ?? 30_000,
    ...(options.statementTimeoutMs && sessions ? { statement_timeout: options.statementTimeoutMs } : {}),
    ...(options.sessionSettings && sessions
      ? {
          options: Object.entries(options.sessionSettings)
            .map(([name, value]) => `-c ${name}=${value}`)
            .join(' '),
        }
      : {}),
  });
  const stats: PoolStats = { acquires: 0, emptyAcquires: 0, canceledAcquires: 0, acquireMsTotal: 0 };
  // A connection that dies while idle must not crash the process; the pool drops it.
  pool.on('error', () => undefined);
  const deadlines = new WeakMap<pg.PoolClient, DatabaseDeadline>();
  pool.on('connect', (client) => {
    if (!sessions) {
      forgetStatementNames(client);
    }
    boundStatements(client, (checkedOut) => deadlines.get(checkedOut));
  });
  pool.on('release', (_error: unknown, client: pg.PoolClient) => deadlines.delete(client));
  const connect = pool.connect.bind(pool) as (callback: ConnectCallback) => void;

  /** Checks out a connection, giving up at the caller's deadline (a late connection goes straight back). */
  const connectBy = (deadline: DatabaseDeadline | undefined, callback: ConnectCallback) => {
    if (!deadline) {
      connect(callback);
      return;
    }
    const remaining = deadline.remainingMs();
    if (remaining <= 0) {
      process.nextTick(callback, deadlineError(), undefined, () => undefined);
      return;
    }
    let answered = false;
    const timer = setTimeout(() => {
      answered = true;
      callback(deadlineError(), undefined, () => undefined);
    }, remaining);
    connect((err, client, done) => {
      if (answered) {
        // pg-pool's own acquire timeout answers with the error alone: no connection to give back.
        if (client && !err) {
          done();
        }
        return;
      }
      answered = true;
      clearTimeout(timer);
      if (client && !err) {
        deadlines.set(client, deadline);
      }
      callback(err, client, done);
    });
  };

  const instrumented = (callback?: ConnectCallback): Promise<pg.PoolClient> | undefined => {
    const started = performance.now();
    const deadline = currentDatabaseDeadline();
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
      connectBy(deadline, settle);
      return undefined;
    }
    return new Promise((resolve, reject) => {
      connectBy(deadline, (err, client, done) => {
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
