import { type AgingTarget, countedAge } from '../../platform/db/aging.ts';
import type { Queryable } from '../../platform/db/pool.ts';
import { defineTask } from '../../platform/tasks/task.ts';
import type { purgeSettingsHistory } from './tasks/purgeSettingsHistory.ts';

const settingsHistoryAgeSql = `
select now() - make_interval(secs => $1) as cutoff,
       (select min(changed_at) from settings_history) as oldest,
       (select count(*) from settings_history where changed_at < now() - make_interval(secs => $1)) as past_cutoff`;

export const selectSettingsHistoryAge = (db: Queryable, seconds: number) => countedAge(db, settingsHistoryAgeSql, seconds);

/** Setting changes age by changed_at under `ops.history_retention`. */
export const settingsHistoryAging: AgingTarget<'ops.history_retention'> = {
  kind: 'settings_history',
  setting: 'ops.history_retention',
  age: selectSettingsHistoryAge,
  task: defineTask<typeof purgeSettingsHistory>('retention.settings_history', import.meta.url, './tasks/purgeSettingsHistory', 'purgeSettingsHistory'),
};
