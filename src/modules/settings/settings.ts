import { durationSetting } from '../../platform/settingDeclarations.ts';

/** The settings module's runtime settings. Names are public API: add, never rename. */
export const settingsSettings = [
  durationSetting({
    name: 'ops.history_retention',
    group: 'retention',
    description: 'Age after which the daily retention job deletes settings and job configuration history',
    default: '8760h',
    min: '720h',
    max: '87600h',
  }),
] as const;
