import type pg from 'pg';
import type { RecordAudit } from '../../platform/audit.ts';
import type { JobRegistry } from './definitions.ts';

export interface JobConfig {
  enabled: boolean;
  schedule: string;
}

/** What the ops operations of the jobs module need. */
export interface JobsServiceDeps {
  pool: pg.Pool;
  jobs: JobRegistry;
  /** The audit trail: a definition change records `jobs.definition.changed` in its transaction. */
  recordAudit: RecordAudit;
  /** Bound on each read behind the overview and the run list. */
  queryTimeoutMs: number;
}
