import type pg from 'pg';
import { PG, pgCode } from '../../platform/db/pgErrors.ts';
import type { Queryable } from '../../platform/db/pool.ts';
import { withTransaction } from '../../platform/db/transaction.ts';
import { AuditError } from './errors.ts';
import { rollupServes, selectRollupDays, selectRollupGroups, wholeHours } from './rollup.ts';
import {
  type AuditFilter,
  type AuditGroupBy,
  type StoredAuditEvent,
  selectAuditDays,
  selectAuditEvents,
  selectAuditGroups,
  setStatementTimeout,
} from './store.ts';

export const QUERY_TIMEOUT_MS = 5_000;
export const STATS_TOP_GROUPS = 50;

export interface AuditStats {
  from: Date;
  to: Date;
  groupBy: AuditGroupBy | 'day';
  total: number;
  groups: Array<{ key: string; count: number }>;
  /** Events outside the top groups. */
  other: number;
}

export interface AuditQueriesOptions {
  /** Bound on each read; 5 s in service, shorter only where a test needs it. */
  timeoutMs?: number;
}

/** Reads of the audit log, each bounded: past the bound they fail with 503 audit_query_timeout. */
export function createAuditQueries(pool: pg.Pool, options: AuditQueriesOptions = {}) {
  const timeoutMs = options.timeoutMs ?? QUERY_TIMEOUT_MS;

  async function bounded<T>(work: (tx: Queryable) => Promise<T>): Promise<T> {
    try {
      return await withTransaction(pool, async (tx) => {
        await setStatementTimeout(tx, timeoutMs);
        return work(tx);
      });
    } catch (error) {
      if (pgCode(error) === PG.queryCanceled) {
        throw new AuditError('audit_query_timeout', `The audit query took longer than ${timeoutMs / 1000} s; narrow the filters or the window.`, {
          cause: error,
        });
      }
      throw error;
    }
  }

  return {
    list(filter: AuditFilter, beforeId: string | undefined, limit: number): Promise<StoredAuditEvent[]> {
      return bounded((tx) => selectAuditEvents(tx, filter, beforeId, limit));
    },

    stats(filter: AuditFilter & { from: Date; to: Date }, groupBy: AuditGroupBy | 'day'): Promise<AuditStats> {
      const hours = rollupServes(filter) ? wholeHours(filter.from, filter.to) : null;
      return bounded(async (tx) => {
        if (groupBy === 'day') {
          const days = hours ? await selectRollupDays(tx, filter, hours) : await selectAuditDays(tx, filter);
          const total = days.reduce((sum, day) => sum + day.count, 0);
          return { from: filter.from, to: filter.to, groupBy, total, groups: days, other: 0 };
        }
        const rows = hours
          ? await selectRollupGroups(tx, filter, hours, groupBy, STATS_TOP_GROUPS)
          : await selectAuditGroups(tx, filter, groupBy, STATS_TOP_GROUPS);
        const total = rows[0]?.total ?? 0;
        const shown = rows.reduce((sum, row) => sum + row.count, 0);
        return {
          from: filter.from,
          to: filter.to,
          groupBy,
          total,
          groups: rows.map(({ key, count }) => ({ key, count })),
          other: total - shown,
        };
      });
    },
  };
}

export type AuditQueries = ReturnType<typeof createAuditQueries>;
