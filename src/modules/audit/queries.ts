import type pg from 'pg';
import { boundedRead } from '../../platform/db/boundedRead.ts';
import type { Queryable } from '../../platform/db/pool.ts';
import { AuditError } from './errors.ts';
import { type ListPosition, selectAuditPage, selectPositionOfId } from './listing.ts';
import { rollupPeriods, rollupServes, selectRollupDays, selectRollupGroups } from './rollup.ts';
import { type AuditFilter, type AuditGroupBy, type StoredAuditEvent, selectAuditDays, selectAuditGroups } from './store.ts';

export const QUERY_TIMEOUT_MS = 5_000;
export const STATS_TOP_GROUPS = 50;
/** Rows of the window one list request examines at most, whatever its filters. */
export const LIST_SCAN_ROWS = 20_000;

/** `<occurred_at in µs since the epoch>_<id>`; a bare id is the former cursor, still accepted. */
export const LIST_CURSOR_PATTERN = /^(?:\d{1,18}|-?\d{1,19}_\d{1,18})$/;

// Years 1 to 9999, as the answers' timestamps show them: a time outside is no cursor this service
// gave, and PostgreSQL would refuse it as out of range.
const CURSOR_FIRST_US = -62_135_596_800_000_000n;
const CURSOR_END_US = 253_402_300_800_000_000n;

/** False for a cursor of the pattern whose time lies outside years 1-9999; true otherwise. */
export function cursorTimeInRange(value: string): boolean {
  const [atUs, id] = value.split('_');
  return id === undefined || !/^-?\d+$/.test(atUs!) || (BigInt(atUs!) >= CURSOR_FIRST_US && BigInt(atUs!) < CURSOR_END_US);
}

const cursorOf = (position: ListPosition) => `${position.atUs}_${position.id}`;

export interface AuditListPage {
  events: StoredAuditEvent[];
  nextCursor: string | undefined;
  /** When the scan reached its bound before filling the page: the occurred_at where it stopped. */
  scanStoppedAt: Date | undefined;
}

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
  /** Rows one list request examines at most; LIST_SCAN_ROWS in service, fewer only where a test needs it. */
  listScanRows?: number;
}

/** Reads of the audit log, each bounded: past the bound they fail with 503 audit_query_timeout. */
export function createAuditQueries(pool: pg.Pool, options: AuditQueriesOptions = {}) {
  const timeoutMs = options.timeoutMs ?? QUERY_TIMEOUT_MS;
  const listScanRows = options.listScanRows ?? LIST_SCAN_ROWS;

  const timedOut = (cause: unknown) =>
    new AuditError('audit_query_timeout', `The audit query took longer than ${timeoutMs / 1000} s; narrow the filters or the window.`, { cause });
  const bounded = <T>(work: (tx: Queryable) => Promise<T>): Promise<T> => boundedRead(pool, timeoutMs, timedOut, work);

  return {
    /** Newest first by (occurred_at, id), below the cursor; `cursor` must match LIST_CURSOR_PATTERN. */
    list(filter: AuditFilter, cursor: string | undefined, limit: number): Promise<AuditListPage> {
      return bounded(async (tx) => {
        let after: ListPosition | null = null;
        if (cursor?.includes('_')) {
          const [atUs, id] = cursor.split('_') as [string, string];
          after = { atUs, id };
        } else if (cursor) {
          after = await selectPositionOfId(tx, cursor);
          if (!after) {
            throw new AuditError('audit_cursor_expired', 'The event this cursor points at is gone; start again from the first page.');
          }
        }
        const { rows, stoppedAt } = await selectAuditPage(tx, filter, after, limit + 1, listScanRows);
        const events = rows.slice(0, limit);
        const last = events.at(-1);
        const next = rows.length > limit && last ? { atUs: last.at_us, id: last.id } : stoppedAt;
        return { events, nextCursor: next ? cursorOf(next) : undefined, scanStoppedAt: stoppedAt?.occurredAt };
      });
    },

    stats(filter: AuditFilter & { from: Date; to: Date }, groupBy: AuditGroupBy | 'day'): Promise<AuditStats> {
      const periods = rollupServes(filter) ? rollupPeriods(filter.from, filter.to) : null;
      return bounded(async (tx) => {
        if (groupBy === 'day') {
          const days = periods ? await selectRollupDays(tx, filter, periods) : await selectAuditDays(tx, filter);
          const total = days.reduce((sum, day) => sum + day.count, 0);
          return { from: filter.from, to: filter.to, groupBy, total, groups: days, other: 0 };
        }
        const rows = periods
          ? await selectRollupGroups(tx, filter, periods, groupBy, STATS_TOP_GROUPS)
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
