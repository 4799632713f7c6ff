import type pg from 'pg';
import type { Queryable } from '../../platform/db/pool.ts';
import type { Actor } from '../../platform/http/route.ts';
import type { JobRegistry } from './definitions.ts';

export interface JobConfig {
  enabled: boolean;
  schedule: string;
}

/** A change of a job definition, for the audit trail (event `jobs.definition.changed`). */
export interface JobDefinitionChangeEvent {
  actor: Actor | undefined;
  job: string;
  before: JobConfig;
  after: JobConfig;
  reason: string;
  requestId: string;
  clientAddress: string;
  userAgent: string;
}

/** Records the audit event inside the change's transaction; filled in by src/app/. */
export type RecordJobDefinitionChange = (tx: Queryable, event: JobDefinitionChangeEvent) => Promise<void>;

/** What the ops operations of the jobs module need. */
export interface JobsServiceDeps {
  pool: pg.Pool;
  jobs: JobRegistry;
  recordDefinitionChange: RecordJobDefinitionChange;
  /** Bound on each read behind the overview and the run list. */
  queryTimeoutMs: number;
}
