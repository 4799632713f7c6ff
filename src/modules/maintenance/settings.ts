import { booleanSetting, durationSetting, stringSetting } from '../../platform/settingDeclarations.ts';

/** The maintenance module's runtime settings. Names are public API: add, never rename. */
export const maintenanceSettings = [
  booleanSetting({
    name: 'maintenance.enabled',
    group: 'maintenance',
    description: 'Maintenance mode: every route but health, docs, ops and sign-in answers 503 `maintenance`',
    default: false,
  }),
  stringSetting({
    name: 'maintenance.message',
    group: 'maintenance',
    description: 'The `detail` of maintenance answers; empty means a default sentence',
    default: '',
    maxLength: 500,
  }),
  durationSetting({
    name: 'maintenance.retry_after',
    group: 'maintenance',
    description: 'The Retry-After of maintenance answers',
    default: '5m',
    min: '1m',
    max: '24h',
  }),
] as const;
