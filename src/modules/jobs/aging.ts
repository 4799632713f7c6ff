import { type AgingTarget, countedAge } from '../../platform/db/aging.ts';
import type { Queryable } from '../../platform/db/pool.ts';
import { defineTask } from '../../platform/tasks/task.ts';
import type { purgeJobDefinitionHistory } from './tasks/purgeJobDefinitionHistory.ts';
import type { purgeJobRuns } from './tasks/purgeJobRuns.ts';

const jobDefinitionHistoryAgeSql = `
select now() - make_interval(secs => $1) as cutoff,
       (select min(changed_at) from job_definition_history) as oldest,
       (select count(*) from job_definition_history where changed_at < now() - make_interval(secs => $1)) as past_cutoff`;

export const selectJobDefinitionHistoryAge = (db: Queryable, seconds: number) => countedAge(db, jobDefinitionHistoryAgeSql, seconds);

// Only finished runs age: queued and running ones stay whatever their age.
const jobRunsAgeSql = `
select now() - make_interval(secs => $1) as cutoff,
       (select min(created_at) from job_runs where state in ('succeeded', 'failed')) as oldest,
       (select count(*) from job_runs
        where state in ('succeeded', 'failed') and created_at < now() - make_interval(secs => $1)) as past_cutoff`;

export const selectJobRunsAge = (db: Queryable, seconds: number) => countedAge(db, jobRunsAgeSql, seconds);

/** Job configuration changes age by changed_at under `ops.history_retention`. */
export const jobDefinitionHistoryAging: AgingTarget<'ops.history_retention'> = {
  kind: 'job_definition_history',
  setting: 'ops.history_retention',
  age: selectJobDefinitionHistoryAge,
  task: defineTask<typeof purgeJobDefinitionHistory>(
    'retention.job_definition_history',
    import.meta.url,
    './tasks/purgeJobDefinitionHistory',
    'purgeJobDefinitionHistory',
  ),
};

/** Finished runs age by created_at under `ops.history_retention`. */
export const jobRunsAging: AgingTarget<'ops.history_retention'> = {
  kind: 'job_runs',
  setting: 'ops.history_retention',
  age: selectJobRunsAge,
  task: defineTask<typeof purgeJobRuns>('retention.job_runs', import.meta.url, './tasks/purgeJobRuns', 'purgeJobRuns'),
};
