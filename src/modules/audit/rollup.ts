// Audit statistics from the hourly rollup (ADR 0053). Whole UTC hours of a window come from
// audit_event_rollup plus the deltas not yet folded into it; the partial hours at its edges come
// from audit_events through the occurred_at index.
import type { Queryable } from '../../platform/db/pool.ts';
import { type AuditFilter, type AuditGroupBy, type AuditGroupCount, FILTER_CONDITIONS } from './store.ts';

const HOUR_MS = 3_600_000;

/** The filters the rollup holds: a filter on actor, resource id or request stays on the table. */
export function rollupServes(filter: AuditFilter): boolean {
  return filter.actorId === undefined && filter.resourceId === undefined && filter.requestId === undefined;
}

/** The whole UTC hours inside [from, to), or null when the window holds none. */
export function wholeHours(from: Date, to: Date): { first: Date; end: Date } | null {
  const first = Math.ceil(from.getTime() / HOUR_MS) * HOUR_MS;
  const end = Math.floor(to.getTime() / HOUR_MS) * HOUR_MS;
  return first < end ? { first: new Date(first), end: new Date(end) } : null;
}

const values = (filter: AuditFilter & { from: Date; to: Date }, hours: { first: Date; end: Date }) => [
  filter.action ?? null,
  filter.actionPrefix ?? null,
  filter.actorKind ?? null,
  filter.actorId ?? null,
  filter.resourceType ?? null,
  filter.resourceId ?? null,
  filter.outcome ?? null,
  filter.requestId ?? null,
  filter.from,
  filter.to,
  hours.first,
  hours.end,
];

// $1…$10 as in store.ts, $11 and $12 the whole hours [first, end); $4, $6 and $8 are null here.
const ROLLUP_CONDITIONS = `
  hour >= $11 and hour < $12
  and ($1::text is null or action = $1)
  and ($2::text is null or starts_with(action, $2))
  and ($3::text is null or actor_kind = $3)
  and ($5::text is null or resource_type = $5)
  and ($7::text is null or outcome = $7)`;

// Each source keeps its own range, so each is read by its index and its partitions pruned.
const countedSql = (hourExpression: string, eventExpression: string) => `
  select ${hourExpression} as at, action, outcome, actor_kind, resource_type, count from audit_event_rollup where ${ROLLUP_CONDITIONS}
  union all
  select ${hourExpression}, action, outcome, actor_kind, resource_type, count from audit_event_rollup_deltas where ${ROLLUP_CONDITIONS}
  union all
  select ${eventExpression}, action, outcome, actor_kind, resource_type, 1 from audit_events where ${FILTER_CONDITIONS} and occurred_at < $11
  union all
  select ${eventExpression}, action, outcome, actor_kind, resource_type, 1 from audit_events where ${FILTER_CONDITIONS} and occurred_at >= $12`;

const selectRollupGroupsSql = `
with counted as (${countedSql('hour', 'occurred_at')}
), grouped as (
  select case $13::text when 'action' then action
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
limit $14`;

/** As selectAuditGroups, for a filter the rollup serves over a window holding whole hours. */
export async function selectRollupGroups(
  db: Queryable,
  filter: AuditFilter & { from: Date; to: Date },
  hours: { first: Date; end: Date },
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
), counted as (${countedSql("date_trunc('day', hour at time zone 'utc')", "date_trunc('day', occurred_at at time zone 'utc')")}
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
  hours: { first: Date; end: Date },
): Promise<Array<{ key: string; count: number }>> {
  const result = await db.query<{ key: string; count: string }>(selectRollupDaysSql, values(filter, hours));
  return result.rows.map((row) => ({ key: row.key, count: Number(row.count) }));
}
