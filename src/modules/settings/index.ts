import type pg from 'pg';
import type { Logger } from 'pino';
import type { NotificationListener } from '../../platform/db/listener.ts';
import { type SettingsCacheOptions, createSettingsCache } from './cache.ts';
import { createSettingsReader } from './reader.ts';
import { type RecordSettingAudit, createSettingsService } from './service.ts';

export { settingsRoutes } from './routes.ts';
export { settingsStatuses } from './errors.ts';
export type { SettingsReader } from './reader.ts';
export { changeSettings, type SettingsService, type RecordSettingAudit, type ChangeContext, type SettingChange } from './service.ts';
export { SETTINGS, type SettingName } from './registry.ts';
export { SETTINGS_CHANNEL } from './cache.ts';
export { formatDurationSeconds } from './durations.ts';
export { purgeSettingsHistory } from './purge.ts';
export { settingBody } from './schemas.ts';

export interface SettingsModuleDeps {
  pool: pg.Pool;
  listener: NotificationListener;
  logger: Logger;
  recordAudit: RecordSettingAudit;
  cache?: SettingsCacheOptions;
}

/** Loads every setting before returning, so an instance never serves on defaults it should not. */
export async function createSettingsModule(deps: SettingsModuleDeps) {
  const cache = createSettingsCache(deps.pool, deps.listener, deps.logger, deps.cache);
  try {
    await cache.load();
  } catch (error) {
    cache.close();
    throw error;
  }
  return {
    reader: createSettingsReader(cache),
    service: createSettingsService({ pool: deps.pool, cache, recordAudit: deps.recordAudit }),
    reload: () => cache.reload(),
    close: () => cache.close(),
  };
}
