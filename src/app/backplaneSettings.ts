import type { auditSettings } from '../modules/audit/index.ts';
import type { authSettings } from '../modules/auth/index.ts';
import type { maintenanceSettings } from '../modules/maintenance/index.ts';
import type { releasesSettings } from '../modules/releases/index.ts';
import type { DurationSettingName, SettingsReader, settingsSettings } from '../modules/settings/index.ts';

/** Every setting Backplane's own modules declare, each in its folder: the names its wiring reads are checked against these. */
export type BackplaneSetting = (typeof authSettings | typeof auditSettings | typeof settingsSettings | typeof releasesSettings | typeof maintenanceSettings)[number];

/** The settings reader as Backplane's wiring uses it: a name no module declares (or of another kind) does not compile. */
export type BackplaneSettingsReader = SettingsReader<BackplaneSetting>;

export type BackplaneDurationSetting = DurationSettingName<BackplaneSetting>;
