import type pg from 'pg';
import { settingsHistoryAging } from './aging.ts';
import type { Logger } from 'pino';
import type { NotificationListener } from '../../platform/db/listener.ts';
import { type SettingsCacheOptions, createSettingsCache } from './cache.ts';
import { createSettingsReader } from './reader.ts';
import type { RecordAudit } from '../../platform/audit.ts';
import { definePart } from '../../platform/module.ts';
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

export interface SettingsNeeds {
  pool: pg.Pool;
  listener: NotificationListener;
  logger: Logger;
  recordAudit: RecordAudit;
  cache?: SettingsCacheOptions;
}

/** Runtime settings: held in memory on every instance, changed with a reason, followed within a second. */
export const settingsModule = definePart({
  name: 'settings',
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
  async create(needs: SettingsNeeds) {
    const cache = createSettingsCache(needs.pool, needs.listener, needs.logger, needs.cache);
    try {
      await cache.load();
    } catch (error) {
      cache.close();
      throw error;
    }
    const service = createSettingsService({ pool: needs.pool, cache, recordAudit: needs.recordAudit });
    return {
      api: { reader: createSettingsReader(cache), service, reload: () => cache.reload() },
      routeDeps: { settings: service },
      close: () => cache.close(),
    };
  },
});
