// Audit statistics from the rollups (ADR 0053). Whole UTC days of a window come from
// audit_event_rollup_daily, the whole hours around them from audit_event_rollup, plus the deltas
// not yet folded; the partial hours at its edges come from audit_events by the occurred_at index.
// A window's partial first or last day more than half inside it is read whole, less its hours outside.
import type { Queryable } from '../../platform/db/pool.ts';
import { type AuditFilter, type AuditGroupBy, type AuditGroupCount, FILTER_CONDITIONS, filterValues } from './store.ts';

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

/** The filters the rollup holds: a filter on actor, resource id or request stays on the table. */
export function rollupServes(filter: AuditFilter): boolean {
  return filter.actorId === undefined && filter.resourceId === undefined && filter.requestId === undefined;
}

export interface RollupPeriods {
  /** Whole UTC hours [first, end) of the window: the rollups count them, the table the partial hours around. */
  first: Date;
  end: Date;
  /**
   * Whole UTC days [dayFrom, dayTo) read from the daily rollup. The first or last may reach outside
   * [first, end) by less than 12 hours: subtracting those hours reads fewer rows than adding the
   * hours inside. Both at `first` when no day is read.
   */
  dayFrom: Date;
  dayTo: Date;
}

const HALF_DAY_MS = DAY_MS / 2;
const ceilTo = (ms: number, unit: number) => Math.ceil(ms / unit) * unit;
const floorTo = (ms: number, unit: number) => Math.floor(ms / unit) * unit;

/** The rollups' periods for [from, to), or null when the window holds no whole hour. */
export function rollupPeriods(from: Date, to: Date): RollupPeriods | null {
  const first = ceilTo(from.getTime(), HOUR_MS);
  const end = floorTo(to.getTime(), HOUR_MS);
  if (first >= end) {
    return null;
  }
  let dayFrom = ceilTo(first, DAY_MS);
  let dayTo = floorTo(end, DAY_MS);
  if (dayFrom > dayTo) {
    // No midnight inside: one partial day, whole when it holds more than half of it.
    const day = floorTo(first, DAY_MS);
    [dayFrom, dayTo] = end - first > HALF_DAY_MS ? [day, day + DAY_MS] : [first, first];
  } else {
    dayFrom -= dayFrom - first > HALF_DAY_MS ? DAY_MS : 0;
    dayTo += end - dayTo > HALF_DAY_MS ? DAY_MS : 0;
  }
  return { first: new Date(first), end: new Date(end), dayFrom: new Date(dayFrom), dayTo: new Date(dayTo) };
}

const values = (filter: AuditFilter & { from: Date; to: Date }, periods: RollupPeriods) => [
  ...filterValues(filter),
  periods.first,
  periods.end,
  periods.dayFrom,
  periods.dayTo,
];

// $1…$10 as in store.ts, $11 and $12 the whole hours [first, end), $13 and $14 the days
// [dayFrom, dayTo); $4, $6 and $8 are null here.
const ROLLUP_CONDITIONS = `
  ($1::text is null or action = $1)
  and ($2::text is null or starts_with(action, $2))
  and ($3::text is null or actor_kind = $3)
  and ($5::text is null or resource_type = $5)
  and ($7::text is null or outcome = $7)`;

// Each source keeps its own range, so each is read by its index and its partitions pruned. The hours
// between the window's ends and its days are added when inside the window, subtracted when a day
// reaches past it.
const countedSql = (bucket: (column: string) => string, eventExpression: string) => `
  select ${bucket('day')} as at, action, outcome, actor_kind, resource_type, count from audit_event_rollup_daily
  where day >= $13 and day < $14 and ${ROLLUP_CONDITIONS}
  union all
  select ${bucket('hour')}, action, outcome, actor_kind, resource_type, case when hour >= $11 then count else -count end
  from audit_event_rollup
  where hour >= least($11::timestamptz, $13::timestamptz) and hour < greatest($11::timestamptz, $13::timestamptz) and ${ROLLUP_CONDITIONS}
  union all
  select ${bucket('hour')}, action, outcome, actor_kind, resource_type, case when hour < $12 then count else -count end
  from audit_event_rollup
  where hour >= least($12::timestamptz, $14::timestamptz) and hour < greatest($12::timestamptz, $14::timestamptz) and ${ROLLUP_CONDITIONS}
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
  periods: RollupPeriods,
  groupBy: AuditGroupBy,
  limit: number,
): Promise<AuditGroupCount[]> {
  const result = await db.query<{ key: string; count: string; total: string }>(selectRollupGroupsSql, [...values(filter, periods), groupBy, limit]);
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
  periods: RollupPeriods,
): Promise<Array<{ key: string; count: number }>> {
  const result = await db.query<{ key: string; count: string }>(selectRollupDaysSql, values(filter, periods));
  return result.rows.map((row) => ({ key: row.key, count: Number(row.count) }));
}

const countEventsSql = `select count(*) as count from audit_events where occurred_at >= $1 and occurred_at < $2`;

/**
 * How many events occurred in [from, to): from the rollups (as the statistics, so flat however many
 * events the window holds), or over the table for a window holding no whole hour.
 */
export async function countAuditEvents(db: Queryable, from: Date, to: Date): Promise<number> {
  const periods = rollupPeriods(from, to);
  if (!periods) {
    return Number((await db.query<{ count: string }>(countEventsSql, [from, to])).rows[0]!.count);
  }
  return (await selectRollupGroups(db, { from, to }, periods, 'outcome', 1))[0]?.total ?? 0;
}
