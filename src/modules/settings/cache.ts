import type { Logger } from 'pino';
import { followTable } from '../../platform/db/followTable.ts';
import type { NotificationListener } from '../../platform/db/listener.ts';
import type { Queryable } from '../../platform/db/pool.ts';
import { REGISTRY, type SettingDefinition } from './registry.ts';
import { type StoredSetting, selectStoredSettings } from './store.ts';
import { type SettingValue, readSettingValue } from './values.ts';

export const SETTINGS_CHANNEL = 'backplane_settings';
const RESYNC_MS = 5 * 60_000;

export interface CachedSetting {
  definition: SettingDefinition;
  /** The effective value: the stored one when valid, else the default. */
  value: SettingValue;
  stored: StoredSetting | undefined;
  /** A stored value the declaration no longer accepts (bounds tightened): the default applies. */
  invalidStored: boolean;
}

export function effectiveSetting(definition: SettingDefinition, stored: StoredSetting | undefined): CachedSetting {
  const value = stored ? readSettingValue(definition, stored.value) : undefined;
  return { definition, value: value ?? definition.default, stored, invalidStored: stored !== undefined && value === undefined };
}

export interface SettingsCache {
  get(name: string): CachedSetting | undefined;
  all(): CachedSetting[];
  /** First load: throws when the database cannot answer, so an instance never starts on defaults. */
  load(): Promise<void>;
  /** Reads everything again; on failure keeps the last known values. Resolves after a read that began after the call. */
  reload(): Promise<void>;
  close(): void;
}

export interface SettingsCacheOptions {
  resyncMs?: number;
}

/**
 * Every setting's value in memory, swapped whole after each read. Reloaded on NOTIFY, on every
 * (re)connect of the listener and every 5 minutes; reads never touch the database.
 */
export function createSettingsCache(db: Queryable, listener: NotificationListener, logger: Logger, options: SettingsCacheOptions = {}): SettingsCache {
  let snapshot = new Map<string, CachedSetting>();
  const warned = new Set<string>();

  function build(rows: StoredSetting[]): Map<string, CachedSetting> {
    const stored = new Map(rows.map((row) => [row.name, row]));
    const next = new Map<string, CachedSetting>();
    for (const definition of REGISTRY.values()) {
      const entry = effectiveSetting(definition, stored.get(definition.name));
      if (entry.invalidStored && !warned.has(`${definition.name}@${entry.stored!.version}`)) {
        warned.add(`${definition.name}@${entry.stored!.version}`);
        logger.warn({ setting: definition.name, version: entry.stored!.version }, 'stored setting value is outside its declaration; using the default');
      }
      next.set(definition.name, entry);
    }
    return next;
  }

  async function load(): Promise<void> {
    snapshot = build(await selectStoredSettings(db));
  }

  const follower = followTable({
    listener,
    channel: SETTINGS_CHANNEL,
    resyncMs: options.resyncMs ?? RESYNC_MS,
    load,
    logger,
    what: 'settings',
  });

  return {
    get: (name) => snapshot.get(name),
    all: () => [...snapshot.values()],
    load,
    reload: follower.reload,
    close: follower.stop,
  };
}
