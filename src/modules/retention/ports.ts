import type pg from 'pg';
import type { AgingTarget } from '../../platform/db/aging.ts';
import type { BatchBounds, PurgeResult } from '../../platform/db/batchedDelete.ts';
import type { Queryable } from '../../platform/db/pool.ts';

/** The live values of the retention settings; filled in by src/app/ from the settings module. */
export interface RetentionSettings<Setting extends string = string> {
  /** Whole seconds. */
  seconds(name: Setting): number;
  /** The same value as a Go duration ("8760h"), as the settings API shows it. */
  text(name: Setting): string;
}

/** The enforcing job as the jobs module reports it. */
export interface RetentionJobStatus {
  enabled: boolean;
  /** Null while disabled. */
  nextRunAt: Date | null;
  lastRun: { id: string; state: string; startedAt: Date; finishedAt: Date | null; error: string | null } | null;
}

/**
 * One kind's purge: its task's result and where it applied. The one shape from the task to the
 * log line and the `retention.purged` event.
 */
export interface RetentionPurged<Setting extends string = string> extends PurgeResult {
  kind: string;
  setting: Setting;
  retentionSeconds: number;
  cutoff: Date;
  /** Of `deleted`, the rows an earlier attempt or run deleted and died before reporting (from the purge ledger). */
  earlierDeleted: number;
}

export interface RetentionJobDeps<Setting extends string = string> {
  /** What ages, from the modules that own the tables; purged in retention's order (kinds.ts). */
  targets: ReadonlyArray<AgingTarget<Setting>>;
  /** A kind's event is recorded in the transaction that takes its rows out of the purge ledger. */
  pool: pg.Pool;
  /** The tasks open their own connections with it. */
  connectionString: string;
  /** Connections a purge holds at once (at least 2); 3 unless given. */
  purgeConnections?: number;
  settings: RetentionSettings<Setting>;
  /** Keeps audit event partitions ahead of time; returns how many it created. */
  ensureAuditEventPartitions(): Promise<number>;
  recordPurge(db: Queryable, purged: RetentionPurged<Setting>): Promise<void>;
  /** Defaults to DEFAULT_BATCH_BOUNDS. */
  batch?: BatchBounds;
}

/** What GET /ops/retention needs. */
export interface RetentionServiceDeps<Setting extends string = string> {
  targets: ReadonlyArray<AgingTarget<Setting>>;
  pool: pg.Pool;
  settings: RetentionSettings<Setting>;
  /** The enforcing job's state, read on `db` (the overview's bounded transaction). */
  jobStatus(db: Queryable): Promise<RetentionJobStatus>;
  /** Bound on each read behind the overview. */
  queryTimeoutMs: number;
}
