import { durationSetting } from '../../platform/settingDeclarations.ts';

/** The audit module's runtime settings. Names are public API: add, never rename. */
export const auditSettings = [
  durationSetting({
    name: 'audit.retention',
    group: 'retention',
    description: 'Age after which the daily retention job deletes audit events',
    default: '8760h',
    min: '720h',
    max: '87600h',
  }),
] as const;
