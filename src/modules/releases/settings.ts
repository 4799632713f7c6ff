import { durationSetting } from '../../platform/settingDeclarations.ts';

/** The releases module's runtime settings. Names are public API: add, never rename. */
export const releasesSettings = [
  durationSetting({
    name: 'releases.instance_retention',
    group: 'retention',
    description: 'Age after which records of stopped instances are deleted',
    default: '2160h',
    min: '24h',
    max: '26280h',
  }),
] as const;
