import { z } from 'zod';
import { changedBy } from '../../platform/caller.ts';
import { routeDefiner } from '../../platform/http/route.ts';
import { SettingBody, SettingChangeBody, settingBody, settingChangeBody } from './schemas.ts';
import { REASON_MAX_LENGTH, type SettingsService } from './service.ts';
import { PageCursor, PageLimit, keysetPage, rowsForPage } from '../../platform/http/paging.ts';

const NameParams = z.object({
  name: z
    .string()
    .min(1)
    .max(200)
    .meta({ examples: ['auth.login_attempts'] }),
});
const ListQuery = z.object({ group: z.string().max(100).optional() });
const HistoryQuery = z.object({
  before: PageCursor.optional(),
  limit: PageLimit(100),
});
const ChangeBody = z.object({
  value: z.unknown().describe('Of the setting\'s kind; durations as Go duration strings such as "15m" or "87600h"'),
  reason: z.string().max(REASON_MAX_LENGTH).optional().describe('Required: why the value changes'),
  version: z.number().int().min(0).optional().describe('The version last read; a different current version is 409'),
});

/** What the settings routes' handlers receive. */
export interface SettingsRouteDeps {
  settings: SettingsService;
}

const defineRoute = routeDefiner<SettingsRouteDeps>();

export const settingsRoutes = [
  defineRoute({
    method: 'GET',
    path: '/ops/settings',
    needsDatabase: false,
    permission: 'ops.settings.read',
    tag: 'ops',
    summary: 'Every runtime setting with its value, default and bounds',
    description: "Read from the instance's memory: no query.",
    query: ListQuery,
    responses: { 200: z.object({ settings: z.array(SettingBody) }) },
    handler: ({ query, deps }) => ({ settings: deps.settings.list(query.group).map(settingBody) }),
  }),
  defineRoute({
    method: 'GET',
    path: '/ops/settings/{name}',
    permission: 'ops.settings.read',
    needsDatabase: false,
    tag: 'ops',
    summary: 'One runtime setting',
    params: NameParams,
    responses: { 200: SettingBody },
    problems: ['setting_not_found'],
    handler: ({ params, deps }) => settingBody(deps.settings.get(params.name)),
  }),
  defineRoute({
    method: 'GET',
    path: '/ops/settings/{name}/history',
    permission: 'ops.settings.read',
    tag: 'ops',
    summary: 'Changes of a setting, newest first',
    params: NameParams,
    query: HistoryQuery,
    responses: { 200: z.object({ changes: z.array(SettingChangeBody), next_cursor: z.string().optional() }) },
    problems: ['setting_not_found'],
    handler: async ({ params, query, deps }) => {
      const rows = await deps.settings.history(params.name, query.before, rowsForPage(query.limit));
      const { page, nextCursor } = keysetPage(rows, query.limit);
      return {
        changes: page.map(settingChangeBody),
        ...nextCursor,
      };
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/ops/settings/{name}',
    permission: 'ops.settings.write',
    tag: 'ops',
    summary: 'Change a runtime setting; every instance follows within a second',
    description:
      'Needs a reason. A value equal to the current one changes nothing (no version, history or audit event). ' +
      'The value, a history row, an audit event and the notification to every instance commit together.',
    params: NameParams,
    body: ChangeBody,
    responses: { 200: SettingBody },
    problems: ['setting_not_found', 'invalid_setting_value', 'setting_reason_required', 'setting_version_conflict'],
    handler: async ({ params, body, caller, deps }) => {
      const [entry] = await deps.settings.change([{ name: params.name, value: body.value, version: body.version }], body.reason, changedBy(caller));
      return settingBody(entry!);
    },
  }),
];
