import type { Queryable } from '../../platform/db/pool.ts';

export interface AuditEventRow {
  occurredAt: Date | null;
  actorKind: string;
  actorId: string;
  actorLabel: string;
  action: string;
  resourceType: string;
  resourceId: string;
  outcome: string;
  requestId: string;
  clientIp: string | null;
  userAgent: string;
  metadata: Record<string, unknown>;
}

const insertAuditEventSql = `
insert into audit_events (occurred_at, actor_kind, actor_id, actor_label, action, resource_type, resource_id,
                          outcome, request_id, client_ip, user_agent, metadata)
values (coalesce($1, now()), $2, $3, $4, $5, $6, $7, $8, $9, $10::inet, $11, $12::jsonb)
returning id::text`;

export async function insertAuditEvent(db: Queryable, row: AuditEventRow): Promise<string> {
  const result = await db.query<{ id: string }>(insertAuditEventSql, [
    row.occurredAt,
    row.actorKind,
    row.actorId,
    row.actorLabel,
    row.action,
    row.resourceType,
    row.resourceId,
    row.outcome,
    row.requestId,
    row.clientIp,
    row.userAgent,
    JSON.stringify(row.metadata),
  ]);
  return result.rows[0]!.id;
}

/** Filters shared by the list and the statistics; every one optional. */
export interface AuditFilter {
  action?: string | undefined;
  actionPrefix?: string | undefined;
  actorKind?: string | undefined;
  actorId?: string | undefined;
  resourceType?: string | undefined;
  resourceId?: string | undefined;
  outcome?: string | undefined;
  requestId?: string | undefined;
  from?: Date | undefined;
  to?: Date | undefined;
}

/** The filter as $1…$10 of every statement that uses FILTER_CONDITIONS. */
export const filterValues = (filter: AuditFilter) => [
  filter.action ?? null,
  filter.actionPrefix ?? null,
  filter.actorKind ?? null,
  filter.actorId ?? null,
  filter.resourceType ?? null,
  filter.resourceId ?? null,
  filter.outcome ?? null,
  filter.requestId ?? null,
  filter.from ?? null,
  filter.to ?? null,
];

// $1…$10 in every statement below; `from` inclusive, `to` exclusive.
export const FILTER_CONDITIONS = `
  ($1::text is null or action = $1)
  and ($2::text is null or starts_with(action, $2))
  and ($3::text is null or actor_kind = $3)
  and ($4::text is null or actor_id = $4)
  and ($5::text is null or resource_type = $5)
  and ($6::text is null or resource_id = $6)
  and ($7::text is null or outcome = $7)
  and ($8::text is null or request_id = $8)
  and ($9::timestamptz is null or occurred_at >= $9)
  and ($10::timestamptz is null or occurred_at < $10)`;

export interface StoredAuditEvent {
  id: string;
  occurred_at: Date;
  recorded_at: Date;
  actor_kind: string;
  actor_id: string;
  actor_label: string;
  action: string;
  resource_type: string;
  resource_id: string;
  outcome: string;
  request_id: string;
  client_ip: string | null;
  user_agent: string;
  metadata: Record<string, unknown>;
}

// Newest first by id, the keyset: a page continues below the last id it showed. Ordered by the
// column, not the text alias, which would sort 10 before 9.
const selectAuditEventsSql = `
select id::text, occurred_at, recorded_at, actor_kind, actor_id, actor_label, action, resource_type, resource_id,
       outcome, request_id, host(client_ip) as client_ip, user_agent, metadata
from audit_events
where ${FILTER_CONDITIONS}
  and ($11::bigint is null or id < $11)
order by audit_events.id desc
limit $12`;

export async function selectAuditEvents(db: Queryable, filter: AuditFilter, beforeId: string | undefined, limit: number): Promise<StoredAuditEvent[]> {
  const result = await db.query<StoredAuditEvent>(selectAuditEventsSql, [...filterValues(filter), beforeId ?? null, limit]);
  return result.rows;
}

export type AuditGroupBy = 'action' | 'outcome' | 'actor_kind' | 'resource_type';

export interface AuditGroupCount {
  key: string;
  count: number;
  total: number;
}

// Window sums run before the limit, so total counts every event of the window, not just the top.
const selectAuditGroupsSql = `
with grouped as (
  select case $11::text when 'action' then action
                  when 'outcome' then outcome
                  when 'actor_kind' then actor_kind
                  else resource_type end as key,
         count(*) as count
  from audit_events
  where ${FILTER_CONDITIONS}
  group by 1
)
select key, count::int8 as count, (sum(count) over ())::int8 as total
from grouped
order by count desc, key
limit $12`;

export async function selectAuditGroups(db: Queryable, filter: AuditFilter, groupBy: AuditGroupBy, limit: number): Promise<AuditGroupCount[]> {
  const result = await db.query<{ key: string; count: string; total: string }>(selectAuditGroupsSql, [...filterValues(filter), groupBy, limit]);
  return result.rows.map((row) => ({ key: row.key, count: Number(row.count), total: Number(row.total) }));
}

// Every UTC day of the window, those without events at zero.
const selectAuditDaysSql = `
with days as (
  select generate_series(date_trunc('day', $9::timestamptz at time zone 'utc'),
                         date_trunc('day', ($10::timestamptz - interval '1 microsecond') at time zone 'utc'),
                         interval '1 day') as day
), counted as (
  select date_trunc('day', occurred_at at time zone 'utc') as day, count(*) as count
  from audit_events
  where ${FILTER_CONDITIONS}
  group by 1
)
select to_char(days.day, 'YYYY-MM-DD') as key, coalesce(counted.count, 0)::int8 as count
from days left join counted using (day)
order by days.day`;

export async function selectAuditDays(db: Queryable, filter: AuditFilter & { from: Date; to: Date }): Promise<Array<{ key: string; count: number }>> {
  const result = await db.query<{ key: string; count: string }>(selectAuditDaysSql, filterValues(filter));
  return result.rows.map((row) => ({ key: row.key, count: Number(row.count) }));
}
