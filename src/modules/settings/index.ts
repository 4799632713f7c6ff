import { settingsHistoryAging } from './aging.ts';
import { createSettingsCache } from './cache.ts';
import { createSettingsReader } from './reader.ts';
import { auditModule } from '../audit/index.ts';
import { defineModule } from '../../platform/module.ts';
import { settingsStatuses } from './errors.ts';
import { settingsRoutes } from './routes.ts';
import { settingsSettings } from './settings.ts';
import { createSettingsService } from './service.ts';

export { settingsStatuses } from './errors.ts';
export type { SettingsReader } from './reader.ts';
export { changeSettings, type SettingsService, type ChangeContext, type SettingChange } from './service.ts';
export { type DurationSettingName, type SettingDefinition, declareSettings, findSetting } from './registry.ts';
export { settingsSettings } from './settings.ts';
export { SETTINGS_CHANNEL } from './cache.ts';
export { formatDurationSeconds } from '../../platform/durations.ts';
export { purgeSettingsHistory } from './purge.ts';
export { settingsHistoryAging } from './aging.ts';
export { settingBody } from './schemas.ts';

/** Runtime settings: held in memory on every instance, changed with a reason, followed within a second. */
export const settingsModule = defineModule({
  name: 'settings',
  needs: ['audit'],
  /** Audit action → what the event records: the catalogue (ADR 0120); names are public API. */
  auditActions: {
    'settings.value.changed': 'A runtime setting was changed',
  },
  routes: settingsRoutes,
  statuses: settingsStatuses,
  /** Permission name → what it allows; names are public API. */
  permissions: { 'ops.settings.read': 'Read runtime settings, their history and the retention overview', 'ops.settings.write': 'Change runtime settings' },
  /** How its tables age and are purged by the retention job. */
  retention: [settingsHistoryAging],
  settings: settingsSettings,
  /** Loads every setting before returning, so an instance never serves on defaults it should not. */
  // Loaded before serving: an instance started during maintenance starts in maintenance.
  async create(context) {
    const cache = createSettingsCache(context.pool, context.listener, context.logger);
    try {
      await cache.load();
    } catch (error) {
      cache.close();
      throw error;
    }
    const service = createSettingsService({ pool: context.pool, cache, recordAudit: context.use(auditModule).recordAudit });
    return {
      api: { reader: createSettingsReader(cache), service, reload: () => cache.reload() },
      routeDeps: { settings: service },
      close: () => cache.close(),
    };
  },
});
