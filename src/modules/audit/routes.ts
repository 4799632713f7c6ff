import { z } from 'zod';
import { routeDefiner } from '../../platform/http/route.ts';
import { PageLimit } from '../../platform/http/paging.ts';
import { dateTime, timestamp } from '../../platform/http/schemas.ts';
import { ACTION_PATTERN, ACTOR_KINDS, OUTCOMES } from './record.ts';
import { LIST_CURSOR_PATTERN, LIST_SCAN_ROWS, type AuditQueries, cursorTimeInRange } from './queries.ts';
import type { StoredAuditEvent } from './store.ts';

const DAY_MS = 86_400_000;
const STATS_DEFAULT_DAYS = 7;
const STATS_MAX_DAYS = 90;

const filterFields = {
  action: z.string().max(200).regex(ACTION_PATTERN, 'must be dotted lowercase segments such as settings.value.changed').optional(),
  action_prefix: z
    .string()
    .max(200)
    .regex(/^[a-z][a-z0-9_.]*$/, 'must be the start of an action such as settings.')
    .optional(),
  actor_kind: z.enum(ACTOR_KINDS).optional(),
  actor_id: z.string().max(200).optional(),
  resource_type: z.string().max(200).optional(),
  resource_id: z.string().max(200).optional(),
  outcome: z.enum(OUTCOMES).optional(),
  request_id: z.string().max(128).optional(),
  from: dateTime().optional().describe('Inclusive, RFC 3339'),
  to: dateTime().optional().describe('Exclusive, RFC 3339'),
};

const fromBeforeTo = (query: { from?: Date | undefined; to?: Date | undefined }, ctx: z.RefinementCtx) => {
  if (query.from && query.to && query.from >= query.to) {
    ctx.addIssue({ code: 'custom', path: ['from'], message: 'must be before to' });
  }
};

const ListQuery = z
  .object({
    ...filterFields,
    cursor: z
      .string()
      .regex(LIST_CURSOR_PATTERN, 'must be a cursor returned by a previous page')
      .refine(cursorTimeInRange, 'must be a cursor returned by a previous page')
      .optional(),
    limit: PageLimit(100),
  })
  .superRefine(fromBeforeTo);

const StatsQuery = z
  .object({
    ...filterFields,
    group_by: z.enum(['action', 'outcome', 'actor_kind', 'resource_type', 'day']),
  })
  .superRefine(fromBeforeTo)
  .superRefine((query, ctx) => {
    const to = query.to ?? new Date();
    if (query.from && to.getTime() - query.from.getTime() > STATS_MAX_DAYS * DAY_MS) {
      ctx.addIssue({ code: 'custom', path: ['from'], message: `must be at most ${STATS_MAX_DAYS} days before to` });
    }
  });

const AuditEvent = z.object({
  id: z.string(),
  occurred_at: timestamp(),
  recorded_at: timestamp(),
  actor: z.object({ kind: z.string(), id: z.string(), label: z.string() }),
  action: z.string(),
  resource: z.object({ type: z.string(), id: z.string() }),
  outcome: z.enum(OUTCOMES),
  request_id: z.string(),
  client_ip: z.string().nullable(),
  user_agent: z.string(),
  metadata: z.record(z.string(), z.unknown()),
});

const auditEventBody = (row: StoredAuditEvent): z.infer<typeof AuditEvent> => ({
  id: row.id,
  occurred_at: row.occurred_at.toISOString(),
  recorded_at: row.recorded_at.toISOString(),
  actor: { kind: row.actor_kind, id: row.actor_id, label: row.actor_label },
  action: row.action,
  resource: { type: row.resource_type, id: row.resource_id },
  outcome: row.outcome as z.infer<typeof AuditEvent>['outcome'],
  request_id: row.request_id,
  client_ip: row.client_ip,
  user_agent: row.user_agent,
  metadata: row.metadata,
});

const Stats = z.object({
  from: timestamp(),
  to: timestamp(),
  group_by: z.string(),
  total: z.number().int().describe('Every event of the window matching the filters'),
  groups: z.array(z.object({ key: z.string(), count: z.number().int() })),
  other: z.number().int().describe('Events outside the 50 largest groups; always 0 by day'),
});

function filterOf(query: z.infer<typeof ListQuery> | z.infer<typeof StatsQuery>) {
  return {
    action: query.action,
    actionPrefix: query.action_prefix,
    actorKind: query.actor_kind,
    actorId: query.actor_id,
    resourceType: query.resource_type,
    resourceId: query.resource_id,
    outcome: query.outcome,
    requestId: query.request_id,
    from: query.from,
    to: query.to,
  };
}

/** What the audit routes' handlers receive. */
export interface AuditRouteDeps {
  audit: AuditQueries;
}

const defineRoute = routeDefiner<AuditRouteDeps>();

export const auditRoutes = [
  defineRoute({
    method: 'GET',
    path: '/ops/audit',
    permission: 'ops.audit.read',
    tag: 'ops',
    summary: 'Audit events, newest first by occurrence, in keyset pages',
    description:
      `A request examines at most ${LIST_SCAN_ROWS} events, newest first: those of its request_id, resource, actor_id or ` +
      'action (the first of them it filters on), or else every event of its window. When the other filters match too few ' +
      'of them to fill the page, it answers with those found, `scan_stopped_at`, and a `next_cursor` that continues from ' +
      'where the scan stopped. Bounded by 5 s: a slower read is 503 `audit_query_timeout`. ' +
      'A bare id from the former cursor format is still accepted, or 400 `audit_cursor_expired` once its event is gone. ' +
      'Reading the log is not itself audited.',
    query: ListQuery,
    responses: {
      200: z.object({
        events: z.array(AuditEvent),
        next_cursor: z.string().optional().describe('Absent on the last page; present after a stopped scan even with no events'),
        scan_stopped_at: timestamp().optional().describe('The occurred_at where the scan reached its bound; events older than it are not yet examined'),
      }),
    },
    problems: ['audit_query_timeout', 'audit_cursor_expired'],
    handler: async ({ query, deps }) => {
      const page = await deps.audit.list(filterOf(query), query.cursor, query.limit);
      return {
        events: page.events.map(auditEventBody),
        ...(page.nextCursor ? { next_cursor: page.nextCursor } : {}),
        ...(page.scanStoppedAt ? { scan_stopped_at: page.scanStoppedAt.toISOString() } : {}),
      };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/ops/audit/stats',
    permission: 'ops.audit.read',
    tag: 'ops',
    summary: 'Audit events counted by action, outcome, actor kind, resource type or day',
    description:
      `The window defaults to the last ${STATS_DEFAULT_DAYS} days and spans at most ${STATS_MAX_DAYS}. ` +
      'The 50 largest groups by count, the rest summed in `other`; `day` gives every UTC day of the window. ' +
      'Bounded by 5 s: a slower read is 503 `audit_query_timeout`.',
    query: StatsQuery,
    responses: { 200: Stats },
    problems: ['audit_query_timeout'],
    handler: async ({ query, deps }) => {
      const to = query.to ?? new Date();
      const from = query.from ?? new Date(to.getTime() - STATS_DEFAULT_DAYS * DAY_MS);
      const stats = await deps.audit.stats({ ...filterOf(query), from, to }, query.group_by);
      return {
        from: stats.from.toISOString(),
        to: stats.to.toISOString(),
        group_by: stats.groupBy,
        total: stats.total,
        groups: stats.groups,
        other: stats.other,
      };
    },
  }),
];
