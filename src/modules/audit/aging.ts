import type { AgingTarget, TargetAge } from '../../platform/db/aging.ts';
import type { Queryable } from '../../platform/db/pool.ts';
import { defineTask } from '../../platform/tasks/task.ts';
import { countAuditEvents } from './rollup.ts';
import type { purgeAuditEvents } from './tasks/purgeAuditEvents.ts';

const cutoffAndOldestSql = `
select now() - make_interval(secs => $1) as cutoff,
       (select min(occurred_at) from audit_events) as oldest`;

// Monthly partitions that start before the cutoff, with what the catalogue knows of their size:
// the planner's own estimate is reltuples / relpages scaled to the pages the table has now.
const monthsBeforeCutoffSql = `
select to_date(substr(c.relname, 15), 'YYYYMM')::timestamp at time zone 'utc' as starts,
       (to_date(substr(c.relname, 15), 'YYYYMM') + interval '1 month') at time zone 'utc' as ends,
       (to_date(substr(c.relname, 15), 'YYYYMM') + interval '1 month') at time zone 'utc' <= now() - make_interval(secs => $1) as whole,
       c.reltuples::float8 as reltuples,
       c.relpages,
       (coalesce(pg_relation_size(c.oid), 0) / current_setting('block_size')::int)::float8 as pages
from pg_inherits i
join pg_class c on c.oid = i.inhrelid
where i.inhparent = 'audit_events'::regclass
  and c.relname ~ '^audit_events_p[0-9]{6}$'
  and to_date(substr(c.relname, 15), 'YYYYMM')::timestamp at time zone 'utc' < now() - make_interval(secs => $1)
order by c.relname`;

interface MonthRow {
  starts: Date;
  ends: Date;
  whole: boolean;
  reltuples: number;
  relpages: number;
  pages: number;
}

// Rows outside every monthly partition (before partitioning began, or a month not made in time).
const countDefaultSql = `
select count(*) as rows from audit_events_default where occurred_at < now() - make_interval(secs => $1)`;

const count = async (db: Queryable, sql: string, values: unknown[]) => Number((await db.query<{ rows: string }>(sql, values)).rows[0]!.rows);

/**
 * Whole expired months are estimated from the catalogue (they go as a whole, counted exactly when
 * dropped), so the answer stays flat however far retention falls behind. The boundary month and a
 * month the catalogue has no estimate for are counted exactly from the statistics' rollups (as
 * flat: a week behind at 10M events a day would be 70M rows to count one by one), the default
 * partition's expired rows by its occurred_at index.
 */
export async function selectAuditEventsAge(db: Queryable, seconds: number): Promise<TargetAge> {
  const { cutoff, oldest } = (await db.query<{ cutoff: Date; oldest: Date | null }>(cutoffAndOldestSql, [seconds])).rows[0]!;
  let estimate = 0;
  let estimated = false;
  let exact = await count(db, countDefaultSql, [seconds]);
  for (const month of (await db.query<MonthRow>(monthsBeforeCutoffSql, [seconds])).rows) {
    if (month.whole && month.pages === 0) {
      continue;
    }
    if (month.whole && month.reltuples >= 0 && month.relpages > 0) {
      estimate += (month.reltuples / month.relpages) * month.pages;
      estimated = true;
    } else {
      exact += await countAuditEvents(db, month.starts, month.ends < cutoff ? month.ends : cutoff);
    }
  }
  return { cutoff, oldest, pastCutoff: exact + Math.round(estimate), pastCutoffEstimated: estimated };
}

/** Audit events age by occurred_at under `audit.retention`; expired months are dropped whole. */
export const auditEventsAging: AgingTarget<'audit.retention'> = {
  kind: 'audit_events',
  setting: 'audit.retention',
  age: selectAuditEventsAge,
  task: defineTask<typeof purgeAuditEvents>('retention.audit_events', import.meta.url, './tasks/purgeAuditEvents', 'purgeAuditEvents'),
};
