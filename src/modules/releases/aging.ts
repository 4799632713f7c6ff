import { type AgingTarget, countedAge } from '../../platform/db/aging.ts';
import type { Queryable } from '../../platform/db/pool.ts';
import { defineTask } from '../../platform/tasks/task.ts';
import type { purgeReleaseInstances } from './tasks/purgeReleaseInstances.ts';

// Stopping an instance sets last_seen_at too: one column ages stopped and silent instances alike.
const releaseInstancesAgeSql = `
select now() - make_interval(secs => $1) as cutoff,
       (select min(last_seen_at) from release_instances) as oldest,
       (select count(*) from release_instances where last_seen_at < now() - make_interval(secs => $1)) as past_cutoff`;

export const selectReleaseInstancesAge = (db: Queryable, seconds: number) => countedAge(db, releaseInstancesAgeSql, seconds);

/** Instance records age by last_seen_at under `releases.instance_retention`. */
export const releaseInstancesAging: AgingTarget<'releases.instance_retention'> = {
  kind: 'release_instances',
  setting: 'releases.instance_retention',
  age: selectReleaseInstancesAge,
  task: defineTask<typeof purgeReleaseInstances>('retention.release_instances', import.meta.url, './tasks/purgeReleaseInstances', 'purgeReleaseInstances'),
};
