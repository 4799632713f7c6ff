import { recordAuditEvent } from '../audit/index.ts';
import { type JobsServiceDeps, describeJob } from '../jobs/index.ts';
import { type SettingsReader, formatDurationSeconds } from '../settings/index.ts';
import type { Queryable } from '../../platform/db/pool.ts';
import { RETENTION_JOB } from './kinds.ts';
import type { RetentionJobStatus, RetentionPurged, RetentionSettings } from './ports.ts';

// What retention takes of the settings, jobs and audit modules.

/** The retention settings' live values, from the settings held in memory (each target names its own). */
export function retentionSettings(reader: SettingsReader): RetentionSettings {
  return {
    seconds: (name) => reader.duration(name),
    text: (name) => formatDurationSeconds(reader.duration(name)),
  };
}

/** The retention job as the jobs module reports it, read on the overview's bounded transaction. */
export async function retentionJobStatus(jobs: JobsServiceDeps, db: Queryable): Promise<RetentionJobStatus> {
  const status = await describeJob(jobs, RETENTION_JOB, db);
  return { enabled: status.enabled, nextRunAt: status.nextRunAt, lastRun: status.lastRun };
}

/** Each kind that lost rows becomes one `retention.purged` event, with the count (earlier attempts' included) and the cutoff. */
export async function auditRetentionPurge(db: Queryable, purged: RetentionPurged): Promise<void> {
  await recordAuditEvent(db, {
    actor: { kind: 'system', id: 'retention', label: 'system:retention' },
    action: 'retention.purged',
    resource: { type: 'data', id: purged.kind },
    outcome: 'success',
    metadata: {
      rows: purged.deleted,
      earlier_rows: purged.earlierDeleted,
      before: purged.cutoff.toISOString(),
      setting: purged.setting,
      retention: formatDurationSeconds(purged.retentionSeconds),
      statements: purged.statements,
      longest_statement_ms: purged.longestStatementMs,
      longest_statement: purged.longestStatement,
      partitions_dropped: purged.partitionsDropped,
    },
  });
}
