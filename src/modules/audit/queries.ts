import type pg from 'pg';
import { boundedRead } from '../../platform/db/boundedRead.ts';
import type { Queryable } from '../../platform/db/pool.ts';
import { AuditError } from './errors.ts';
import {
  type AuditFilter,
  type AuditGroupBy,
  type StoredAuditEvent,
  selectAuditDays,
  selectAuditEvents,
  selectAuditGroups,
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

  const timedOut = (cause: unknown) =>
    new AuditError('audit_query_timeout', `The audit query took longer than ${timeoutMs / 1000} s; narrow the filters or the window.`, { cause });
  const bounded = <T>(work: (tx: Queryable) => Promise<T>): Promise<T> => boundedRead(pool, timeoutMs, timedOut, work);

  return {
    list(filter: AuditFilter, beforeId: string | undefined, limit: number): Promise<StoredAuditEvent[]> {
      return bounded((tx) => selectAuditEvents(tx, filter, beforeId, limit));
    },

    stats(filter: AuditFilter & { from: Date; to: Date }, groupBy: AuditGroupBy | 'day'): Promise<AuditStats> {
      return bounded(async (tx) => {
        if (groupBy === 'day') {
          const days = await selectAuditDays(tx, filter);
          const total = days.reduce((sum, day) => sum + day.count, 0);
          return { from: filter.from, to: filter.to, groupBy, total, groups: days, other: 0 };
        }
        const rows = await selectAuditGroups(tx, filter, groupBy, STATS_TOP_GROUPS);
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
