import { z } from 'zod';
import { timestamp } from '../../platform/http/schemas.ts';
import type { CachedSetting } from './cache.ts';
import type { SettingChangeRow } from './store.ts';
import { boundsView, toJson } from './values.ts';

const SettingJson = z.union([z.number(), z.boolean(), z.string()]);

export const SettingBody = z.object({
  name: z.string(),
  kind: z.enum(['integer', 'boolean', 'duration', 'string']),
  group: z.string(),
  description: z.string(),
  value: SettingJson.describe('Durations as Go duration strings ("15m", "87600h")'),
  value_seconds: z.number().int().optional().describe('Durations only: the value in seconds'),
  default: SettingJson,
  default_seconds: z.number().int().optional(),
  bounds: z.record(z.string(), z.union([z.number(), z.string()])).describe('min and max (durations also in seconds), or max_length'),
  modified: z.boolean().describe('The value differs from the default'),
  invalid_stored_value: z.boolean().describe('The stored value no longer fits the declaration, so the default applies'),
  version: z.number().int().describe('0 until the first change; send it back with a change to detect concurrent writes'),
  updated_at: timestamp().nullable(),
  updated_by: z.string().nullable(),
});

export function settingBody(entry: CachedSetting): z.infer<typeof SettingBody> {
  const { definition, stored } = entry;
  const seconds = definition.kind === 'duration';
  return {
    name: definition.name,
    kind: definition.kind,
    group: definition.group,
    description: definition.description,
    value: toJson(definition, entry.value),
    ...(seconds ? { value_seconds: entry.value as number } : {}),
    default: toJson(definition, definition.default),
    ...(seconds ? { default_seconds: definition.default } : {}),
    bounds: boundsView(definition),
    modified: entry.value !== definition.default,
    invalid_stored_value: entry.invalidStored,
    version: stored?.version ?? 0,
    updated_at: stored?.updatedAt.toISOString() ?? null,
    updated_by: stored?.updatedBy ?? null,
  };
}

const Actor = z.object({ kind: z.string(), id: z.string(), label: z.string() });

export const SettingChangeBody = z.object({
  id: z.string(),
  name: z.string(),
  old_value: SettingJson,
  new_value: SettingJson,
  version: z.number().int(),
  reason: z.string(),
  actor: Actor,
  request_id: z.string(),
  changed_at: timestamp(),
});

export function settingChangeBody(row: SettingChangeRow): z.infer<typeof SettingChangeBody> {
  return {
    id: row.id,
    name: row.name,
    old_value: row.old_value,
    new_value: row.new_value,
    version: row.version,
    reason: row.reason,
    actor: { kind: row.actor_kind, id: row.actor_id, label: row.actor_label },
    request_id: row.request_id,
    changed_at: row.changed_at.toISOString(),
  };
}
