import { recordAuditEvent } from '../modules/audit/index.ts';
import { type JobsServiceDeps, describeJob } from '../modules/jobs/index.ts';
import { RETENTION_JOB, type RetentionJobStatus, type RetentionPurgeEvent, type RetentionSettings } from '../modules/retention/index.ts';
import { type SettingsReader, formatDurationSeconds } from '../modules/settings/index.ts';
import type { Queryable } from '../platform/db/pool.ts';

/** The retention settings' live values, from the settings held in memory. */
export function retentionSettings(reader: SettingsReader): RetentionSettings {
  return {
    seconds: (name) => reader.duration(name),
    text: (name) => formatDurationSeconds(reader.duration(name)),
  };
}

/** The retention job as the jobs module reports it. */
export async function retentionJobStatus(jobs: JobsServiceDeps): Promise<RetentionJobStatus> {
  const status = await describeJob(jobs, RETENTION_JOB);
  return { enabled: status.enabled, nextRunAt: status.nextRunAt, lastRun: status.lastRun };
}

/** Each kind that lost rows becomes one `retention.purged` event, with the count and the cutoff. */
export async function auditRetentionPurge(db: Queryable, event: RetentionPurgeEvent): Promise<void> {
  await recordAuditEvent(db, {
    actor: { kind: 'system', id: 'retention', label: 'system:retention' },
    action: 'retention.purged',
    resource: { type: 'data', id: event.kind },
    outcome: 'success',
    metadata: {
      rows: event.rows,
      before: event.cutoff.toISOString(),
      setting: event.setting,
      retention: formatDurationSeconds(event.retentionSeconds),
      statements: event.statements,
      longest_statement_ms: event.longestStatementMs,
      longest_statement: event.longestStatement,
      partitions_dropped: event.partitionsDropped,
    },
  });
}
