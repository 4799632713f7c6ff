import { type AgingTarget, countedAge } from '../../platform/db/aging.ts';
import type { Queryable } from '../../platform/db/pool.ts';
import { defineTask } from '../../platform/tasks/task.ts';
import type { purgeAuditEvents } from './tasks/purgeAuditEvents.ts';

const auditEventsAgeSql = `
select now() - make_interval(secs => $1) as cutoff,
       (select min(occurred_at) from audit_events) as oldest,
       (select count(*) from audit_events where occurred_at < now() - make_interval(secs => $1)) as past_cutoff`;

export const selectAuditEventsAge = (db: Queryable, seconds: number) => countedAge(db, auditEventsAgeSql, seconds);

/** Audit events age by occurred_at under `audit.retention`; expired months are dropped whole. */
export const auditEventsAging: AgingTarget<'audit.retention'> = {
  kind: 'audit_events',
  setting: 'audit.retention',
  age: selectAuditEventsAge,
  task: defineTask<typeof purgeAuditEvents>('retention.audit_events', import.meta.url, './tasks/purgeAuditEvents', 'purgeAuditEvents'),
};
