// GET /ops/audit in (occurred_at, id) order with a bound on the rows one request examines (ADR 0054).
import type { Queryable } from '../../platform/db/pool.ts';
import { type AuditFilter, FILTER_CONDITIONS, type StoredAuditEvent, filterValues } from './store.ts';

/** A place in the (occurred_at desc, id desc) order: occurred_at in microseconds since the epoch, and the id. */
export interface ListPosition {
  atUs: string;
  id: string;
}

const FIRST_SCAN_ROWS = 1_000;

// Whole seconds and the microseconds apart: a bigint times an interval goes through float8, which
// rounds microsecond counts past 2^53 (beyond the year 2255).
const AT = (parameter: number) =>
  `('epoch'::timestamptz + ($${parameter}::bigint / 1000000) * interval '1 second' + ($${parameter}::bigint % 1000000) * interval '1 microsecond')`;
const AT_US = `(extract(epoch from occurred_at) * 1000000)::bigint::text`;

/**
 * The rows a request examines: those of the narrowest index its filter has an equality for, each
 * index in (occurred_at desc, id desc) order (migration 20261125000100), or every event of the window
 * when none has one. Its values come after the five of selectScanEndSql.
 */
function scanOf(filter: AuditFilter): { rows: string; values: string[]; complete: boolean } {
  // True when the scanned rows are exactly the filter's: the first `limit` of them are the page.
  const only = (...keys: Array<keyof AuditFilter>) =>
    Object.entries(filter).every(([key, value]) => value === undefined || key === 'from' || key === 'to' || keys.includes(key as keyof AuditFilter));
  if (filter.requestId) {
    return { rows: `request_id = $6 and request_id <> ''`, values: [filter.requestId], complete: only('requestId') };
  }
  if (filter.resourceType && filter.resourceId) {
    return {
      rows: `resource_type = $6 and resource_id = $7 and resource_type <> ''`,
      values: [filter.resourceType, filter.resourceId],
      complete: only('resourceType', 'resourceId'),
    };
  }
  if (filter.actorId) {
    return { rows: `actor_id = $6 and actor_id <> ''`, values: [filter.actorId], complete: only('actorId') };
  }
  if (filter.action) {
    return { rows: 'action = $6', values: [filter.action], complete: only('action') };
  }
  return { rows: 'true', values: [], complete: only() };
}

// Ordered by the table's columns: a bare `id` would name the output column `id::text` and sort as text.
// The row `$5` rows into the scanned rows below the cursor, in time order: the last one the page may examine.
const selectScanEndSql = (rows: string) => `
select ${AT_US} as at_us, id::text
from audit_events
where ${rows}
  and ($1::timestamptz is null or occurred_at >= $1)
  and ($2::timestamptz is null or occurred_at < $2)
  and ($3::bigint is null or (occurred_at <= ${AT(3)} and (occurred_at, id) < (${AT(3)}, $4::bigint)))
order by audit_events.occurred_at desc, audit_events.id desc
offset $5 - 1 limit 1`;

// The page: filtered rows between the cursor (exclusive) and the scan's end (inclusive), by the index
// that chose the scanned rows or the time range, whichever the planner finds narrower.
const selectPageSql = `
select id::text, occurred_at, recorded_at, actor_kind, actor_id, actor_label, action, resource_type, resource_id,
       outcome, request_id, host(client_ip) as client_ip, user_agent, metadata, ${AT_US} as at_us
from audit_events
where ${FILTER_CONDITIONS}
  and ($11::bigint is null or (occurred_at <= ${AT(11)} and (occurred_at, id) < (${AT(11)}, $12::bigint)))
  and ($13::bigint is null or (occurred_at >= ${AT(13)} and (occurred_at, id) >= (${AT(13)}, $14::bigint)))
order by audit_events.occurred_at desc, audit_events.id desc
limit $15`;

const selectPositionOfIdSql = `select ${AT_US} as at_us, id::text from audit_events where id = $1 limit 1`;

export interface ListedPage {
  rows: Array<StoredAuditEvent & { at_us: string }>;
  /** Where the scan stopped, when it stopped at its bound before filling the page. */
  stoppedAt: (ListPosition & { occurredAt: Date }) | null;
}

/**
 * Up to `limit` events below `after`, newest first, examining at most `scanRows` of the rows its most
 * selective indexed filter (or else its window) holds: when the bound stops it first, the events found
 * so far and where it stopped.
 */
export async function selectAuditPage(db: Queryable, filter: AuditFilter, after: ListPosition | null, limit: number, scanRows: number): Promise<ListedPage> {
  const page = (end: ListPosition | undefined) =>
    db.query<StoredAuditEvent & { at_us: string }>(selectPageSql, [
      ...filterValues(filter),
      after?.atUs ?? null,
      after?.id ?? null,
      end?.atUs ?? null,
      end?.id ?? null,
      limit,
    ]);
  const scan = scanOf(filter);
  if (scan.complete) {
    // Every scanned row belongs to the page: reading `limit` of them is the bound.
    return { rows: (await page(undefined)).rows, stoppedAt: null };
  }
  // A short scan first: most pages fill from the newest rows, and finding the 20,000th costs ~50 ms.
  for (const rows of new Set([Math.min(FIRST_SCAN_ROWS, scanRows), scanRows])) {
    const end = (
      await db.query<{ at_us: string; id: string }>(selectScanEndSql(scan.rows), [
        filter.from ?? null,
        filter.to ?? null,
        after?.atUs ?? null,
        after?.id ?? null,
        rows,
        ...scan.values,
      ])
    ).rows[0];
    const result = await page(end && { atUs: end.at_us, id: end.id });
    if (!end || result.rows.length >= limit) {
      return { rows: result.rows, stoppedAt: null };
    }
    if (rows === scanRows) {
      return { rows: result.rows, stoppedAt: { atUs: end.at_us, id: end.id, occurredAt: new Date(Number(BigInt(end.at_us) / 1000n)) } };
    }
  }
  throw new Error('unreachable: the last scan always returns');
}

/** Where an id-only cursor of the former format stands in the new order, or null once its event is gone. */
export async function selectPositionOfId(db: Queryable, id: string): Promise<ListPosition | null> {
  const row = (await db.query<{ at_us: string; id: string }>(selectPositionOfIdSql, [id])).rows[0];
  return row ? { atUs: row.at_us, id: row.id } : null;
}
