import type pg from 'pg';
import type { RecordAudit } from '../../platform/audit.ts';
import type { ChangedBy } from '../../platform/caller.ts';
import { withTransaction } from '../../platform/db/transaction.ts';
import { validationFailed } from '../../platform/errors.ts';
import { type CachedSetting, type SettingsCache, effectiveSetting } from './cache.ts';
import { SettingsError, settingNotFound } from './errors.ts';
import { findSetting } from './registry.ts';
import { type SettingChangeRow, insertSettingChange, lockSetting, selectSettingChanges, selectStoredSetting, upsertSetting } from './store.ts';
import { parseSettingValue, toJson } from './values.ts';

export const REASON_MAX_LENGTH = 500;

/** Who asks for a change and from where, for history and audit. */
export type ChangeContext = ChangedBy;

export interface SettingChange {
  name: string;
  value: unknown;
  /** The version last read; a different current version is a conflict. */
  version?: number | undefined;
}

export interface SettingsServiceDeps {
  pool: pg.Pool;
  cache: SettingsCache;
  recordAudit: RecordAudit;
}

function checkReason(reason: string | undefined): string {
  const trimmed = reason?.trim() ?? '';
  if (!trimmed) {
    throw new SettingsError('setting_reason_required', 'Every change of a setting needs a reason.', {
      issues: [{ location: 'body.reason', message: 'must be a non-empty reason' }],
    });
  }
  if ([...trimmed].length > REASON_MAX_LENGTH) {
    throw validationFailed([{ location: 'body.reason', message: `must be at most ${REASON_MAX_LENGTH} characters` }]);
  }
  return trimmed;
}

function validateChange(change: SettingChange) {
  const definition = findSetting(change.name);
  if (!definition) {
    throw settingNotFound(change.name);
  }
  return { definition, value: parseSettingValue(definition, change.value), version: change.version };
}

/**
 * Applies changes in one transaction, each with its history row, audit event and NOTIFY (by
 * trigger). A change to the current value is skipped: no version, history or event. Also the
 * path of `backplane maintenance`, which has no cache to refresh.
 */
export async function changeSettings(
  pool: pg.Pool,
  recordAudit: RecordAudit,
  changes: SettingChange[],
  reasonText: string | undefined,
  context: ChangeContext,
): Promise<CachedSetting[]> {
  const validated = changes.map(validateChange);
  const reason = checkReason(reasonText);
  return withTransaction(pool, async (tx) => {
    const written: CachedSetting[] = [];
    for (const { definition, value, version } of validated) {
      await lockSetting(tx, definition.name);
      const current = effectiveSetting(definition, await selectStoredSetting(tx, definition.name));
      const currentVersion = current.stored?.version ?? 0;
      if (version !== undefined && version !== currentVersion) {
        throw new SettingsError('setting_version_conflict', `${definition.name} is at version ${currentVersion}, not ${version}: read it again and retry.`);
      }
      const oldValue = toJson(definition, current.value);
      const newValue = toJson(definition, value);
      if (oldValue === newValue && !current.invalidStored) {
        written.push(current);
        continue;
      }
      const stored = await upsertSetting(tx, definition.name, newValue, context.actor);
      const changeId = await insertSettingChange(tx, {
        name: definition.name,
        oldValue,
        newValue,
        version: stored.version,
        reason,
        actor: context.actor,
        requestId: context.requestId ?? '',
      });
      await recordAudit(tx, {
        action: 'settings.value.changed',
        actor: context.actor,
        resource: { type: 'setting', id: definition.name },
        outcome: 'success',
        requestId: context.requestId ?? '',
        clientAddress: context.clientAddress,
        userAgent: context.userAgent,
        metadata: { old_value: oldValue, new_value: newValue, version: stored.version, reason, change_id: changeId },
      });
      written.push(effectiveSetting(definition, stored));
    }
    return written;
  });
}

/** Reads settings from memory and changes them in the database, with history and audit. */
export function createSettingsService(deps: SettingsServiceDeps) {
  return {
    list(group?: string): CachedSetting[] {
      return deps.cache
        .all()
        .filter((entry) => group === undefined || entry.definition.group === group)
        .sort((a, b) => a.definition.name.localeCompare(b.definition.name));
    },

    async history(name: string, beforeId: string | undefined, limit: number): Promise<SettingChangeRow[]> {
      if (!findSetting(name)) {
        throw settingNotFound(name);
      }
      return selectSettingChanges(deps.pool, name, beforeId, limit);
    },

    get(name: string): CachedSetting {
      const entry = findSetting(name) && deps.cache.get(name);
      if (!entry) {
        throw settingNotFound(name);
      }
      return entry;
    },

    /** Changes settings (see changeSettings); this instance serves the result at once, the others follow the NOTIFY. */
    async change(changes: SettingChange[], reason: string | undefined, context: ChangeContext): Promise<CachedSetting[]> {
      const results = await changeSettings(deps.pool, deps.recordAudit, changes, reason, context);
      await deps.cache.reload();
      return results;
    },
  };
}

export type SettingsService = ReturnType<typeof createSettingsService>;
