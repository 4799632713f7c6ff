import type { Queryable } from '../../platform/db/pool.ts';
import { type TaskRef, defineTask } from '../../platform/tasks/task.ts';
import {
  type KindAge,
  selectAuditEventsAge,
  selectJobDefinitionHistoryAge,
  selectJobRunsAge,
  selectReleaseInstancesAge,
  selectSettingsHistoryAge,
} from './store.ts';
import type { PurgeInput, PurgeResult } from './tasks/batches.ts';
import type { purgeAuditEvents } from './tasks/purgeAuditEvents.ts';
import type { purgeJobDefinitionHistory } from './tasks/purgeJobDefinitionHistory.ts';
import type { purgeJobRuns } from './tasks/purgeJobRuns.ts';
import type { purgeReleaseInstances } from './tasks/purgeReleaseInstances.ts';
import type { purgeSettingsHistory } from './tasks/purgeSettingsHistory.ts';

/** The job that enforces every kind below. */
export const RETENTION_JOB = 'retention';

export type RetentionSetting = 'audit.retention' | 'ops.history_retention' | 'releases.instance_retention';

/** A kind of data the retention job deletes once it is older than its setting. */
export interface RetentionKind {
  /** Public name: the resource id of its `retention.purged` events and its entry in GET /ops/retention. */
  kind: string;
  setting: RetentionSetting;
  /** Deletes the kind's expired rows on a worker thread. */
  task: TaskRef<PurgeInput, PurgeResult>;
  describe(db: Queryable, seconds: number): Promise<KindAge>;
}

/** In the order the job purges them and GET /ops/retention lists them. Names are public API. */
export const RETENTION_KINDS: readonly RetentionKind[] = [
  {
    kind: 'audit_events',
    setting: 'audit.retention',
    task: defineTask<typeof purgeAuditEvents>('retention.audit_events', import.meta.url, './tasks/purgeAuditEvents', 'purgeAuditEvents'),
    describe: selectAuditEventsAge,
  },
  {
    kind: 'settings_history',
    setting: 'ops.history_retention',
    task: defineTask<typeof purgeSettingsHistory>('retention.settings_history', import.meta.url, './tasks/purgeSettingsHistory', 'purgeSettingsHistory'),
    describe: selectSettingsHistoryAge,
  },
  {
    kind: 'job_definition_history',
    setting: 'ops.history_retention',
    task: defineTask<typeof purgeJobDefinitionHistory>(
      'retention.job_definition_history',
      import.meta.url,
      './tasks/purgeJobDefinitionHistory',
      'purgeJobDefinitionHistory',
    ),
    describe: selectJobDefinitionHistoryAge,
  },
  {
    kind: 'job_runs',
    setting: 'ops.history_retention',
    task: defineTask<typeof purgeJobRuns>('retention.job_runs', import.meta.url, './tasks/purgeJobRuns', 'purgeJobRuns'),
    describe: selectJobRunsAge,
  },
  {
    kind: 'release_instances',
    setting: 'releases.instance_retention',
    task: defineTask<typeof purgeReleaseInstances>('retention.release_instances', import.meta.url, './tasks/purgeReleaseInstances', 'purgeReleaseInstances'),
    describe: selectReleaseInstancesAge,
  },
];
