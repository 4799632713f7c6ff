// Audit statistics from the rollups (ADR 0053). Whole UTC days of a window come from
// audit_event_rollup_daily, the whole hours around them from audit_event_rollup, plus the deltas
// not yet folded; the partial hours at its edges come from audit_events by the occurred_at index.
import type { Queryable } from '../../platform/db/pool.ts';
import { type AuditFilter, type AuditGroupBy, type AuditGroupCount, FILTER_CONDITIONS, filterValues } from './store.ts';

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

/** The filters the rollup holds: a filter on actor, resource id or request stays on the table. */
export function rollupServes(filter: AuditFilter): boolean {
  return filter.actorId === undefined && filter.resourceId === undefined && filter.requestId === undefined;
}

export interface WholePeriods {
  /** Whole UTC hours [first, end) of the window. */
  first: Date;
  end: Date;
  /** Whole UTC days [firstDay, endDay) inside those hours; empty (both at end) when none. */
  firstDay: Date;
  endDay: Date;
}

/** The whole UTC hours and days inside [from, to), or null when the window holds no whole hour. */
export function wholeHours(from: Date, to: Date): WholePeriods | null {
  const first = Math.ceil(from.getTime() / HOUR_MS) * HOUR_MS;
  const end = Math.floor(to.getTime() / HOUR_MS) * HOUR_MS;
  if (first >= end) {
    return null;
  }
  const firstDay = Math.ceil(first / DAY_MS) * DAY_MS;
  const endDay = Math.floor(end / DAY_MS) * DAY_MS;
  const days = firstDay < endDay ? [firstDay, endDay] : [end, end];
  return { first: new Date(first), end: new Date(end), firstDay: new Date(days[0]!), endDay: new Date(days[1]!) };
}

const values = (filter: AuditFilter & { from: Date; to: Date }, hours: WholePeriods) => [
  ...filterValues(filter),
  hours.first,
  hours.end,
  hours.firstDay,
  hours.endDay,
];

// $1…$10 as in store.ts, $11 and $12 the whole hours [first, end), $13 and $14 the whole days
// [first, end) among them; $4, $6 and $8 are null here.
const ROLLUP_CONDITIONS = `
  ($1::text is null or action = $1)
  and ($2::text is null or starts_with(action, $2))
  and ($3::text is null or actor_kind = $3)
  and ($5::text is null or resource_type = $5)
  and ($7::text is null or outcome = $7)`;

// Each source keeps its own range, so each is read by its index and its partitions pruned.
const countedSql = (bucket: (column: string) => string, eventExpression: string) => `
  select ${bucket('day')} as at, action, outcome, actor_kind, resource_type, count from audit_event_rollup_daily
  where day >= $13 and day < $14 and ${ROLLUP_CONDITIONS}
  union all
  select ${bucket('hour')}, action, outcome, actor_kind, resource_type, count from audit_event_rollup
  where hour >= $11 and hour < $13 and ${ROLLUP_CONDITIONS}
  union all
  select ${bucket('hour')}, action, outcome, actor_kind, resource_type, count from audit_event_rollup
  where hour >= $14 and hour < $12 and ${ROLLUP_CONDITIONS}
  union all
  select ${bucket('hour')}, action, outcome, actor_kind, resource_type, count from audit_event_rollup_deltas
  where hour >= $11 and hour < $12 and ${ROLLUP_CONDITIONS}
  union all
  select ${eventExpression}, action, outcome, actor_kind, resource_type, 1 from audit_events where ${FILTER_CONDITIONS} and occurred_at < $11
  union all
  select ${eventExpression}, action, outcome, actor_kind, resource_type, 1 from audit_events where ${FILTER_CONDITIONS} and occurred_at >= $12`;

const selectRollupGroupsSql = `
with counted as (${countedSql((column) => column, 'occurred_at')}
), grouped as (
  select case $15::text when 'action' then action
                  when 'outcome' then outcome
                  when 'actor_kind' then actor_kind
                  else resource_type end as key,
         sum(count) as count
  from counted
  group by 1
  having sum(count) <> 0
)
select key, count::int8 as count, (sum(count) over ())::int8 as total
from grouped
order by count desc, key
limit $16`;

/** As selectAuditGroups, for a filter the rollup serves over a window holding whole hours. */
export async function selectRollupGroups(
  db: Queryable,
  filter: AuditFilter & { from: Date; to: Date },
  hours: WholePeriods,
  groupBy: AuditGroupBy,
  limit: number,
): Promise<AuditGroupCount[]> {
  const result = await db.query<{ key: string; count: string; total: string }>(selectRollupGroupsSql, [...values(filter, hours), groupBy, limit]);
  return result.rows.map((row) => ({ key: row.key, count: Number(row.count), total: Number(row.total) }));
}

const selectRollupDaysSql = `
with days as (
  select generate_series(date_trunc('day', $9::timestamptz at time zone 'utc'),
                         date_trunc('day', ($10::timestamptz - interval '1 microsecond') at time zone 'utc'),
                         interval '1 day') as day
), counted as (${countedSql((column) => `date_trunc('day', ${column} at time zone 'utc')`, "date_trunc('day', occurred_at at time zone 'utc')")}
), summed as (
  select at as day, sum(count) as count from counted group by 1
)
select to_char(days.day, 'YYYY-MM-DD') as key, coalesce(summed.count, 0)::int8 as count
from days left join summed using (day)
order by days.day`;

/** As selectAuditDays, for a filter the rollup serves over a window holding whole hours. */
export async function selectRollupDays(
  db: Queryable,
  filter: AuditFilter & { from: Date; to: Date },
  hours: WholePeriods,
): Promise<Array<{ key: string; count: number }>> {
  const result = await db.query<{ key: string; count: string }>(selectRollupDaysSql, values(filter, hours));
  return result.rows.map((row) => ({ key: row.key, count: Number(row.count) }));
}
