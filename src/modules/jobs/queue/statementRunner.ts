import type pg from 'pg';

/**
 * A pool or client that runs named statements: the worker's statements run many times a second,
 * and a named one is planned once per connection (the pool sends them unnamed behind a
 * transaction pooler, ADR 0092).
 */
export interface StatementRunner {
  query<R extends pg.QueryResultRow>(config: pg.QueryConfig): Promise<pg.QueryResult<R>>;
}
