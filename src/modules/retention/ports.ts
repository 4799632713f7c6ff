import type pg from 'pg';
import type { Queryable } from '../../platform/db/pool.ts';
import type { RetentionSetting } from './kinds.ts';
import type { BatchBounds } from './tasks/batches.ts';

/** The live values of the retention settings; filled in by src/app/ from the settings module. */
export interface RetentionSettings {
  /** Whole seconds. */
  seconds(name: RetentionSetting): number;
  /** The same value as a Go duration ("8760h"), as the settings API shows it. */
  text(name: RetentionSetting): string;
}

/** The enforcing job as the jobs module reports it. */
export interface RetentionJobStatus {
  enabled: boolean;
  /** Null while disabled. */
  nextRunAt: Date | null;
  lastRun: { id: string; state: string; startedAt: Date; finishedAt: Date | null; error: string | null } | null;
}

/** One kind's purge, for the audit trail (event `retention.purged`). */
export interface RetentionPurgeEvent {
  kind: string;
  setting: RetentionSetting;
  retentionSeconds: number;
  cutoff: Date;
  rows: number;
  statements: number;
  longestStatementMs: number;
  longestStatement: string;
  partitionsDropped: number;
}

export interface RetentionJobDeps {
  /** The tasks open their own connections with it. */
  connectionString: string;
  /** Connections a purge holds at once (at least 2); 3 unless given. */
  purgeConnections?: number;
  settings: RetentionSettings;
  jobStatus(): Promise<RetentionJobStatus>;
  /** Keeps audit event partitions ahead of time; returns how many it created. */
  ensureAuditEventPartitions(): Promise<number>;
  recordPurge(db: Queryable, event: RetentionPurgeEvent): Promise<void>;
  /** Defaults to DEFAULT_BATCH_BOUNDS. */
  batch?: BatchBounds;
}

/** What GET /ops/retention needs. */
export interface RetentionServiceDeps {
  pool: pg.Pool;
  settings: RetentionSettings;
  jobStatus(): Promise<RetentionJobStatus>;
  /** Bound on each count behind the overview. */
  queryTimeoutMs: number;
}
