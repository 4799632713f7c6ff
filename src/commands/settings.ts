import { findSetting, settingBody } from '../modules/settings/index.ts';
import { type Flags, flag, hasFlag, integerFlag } from './args.ts';
import { withDatabase } from './database.ts';
import { printJson, printTable } from './output.ts';
import { cliChange, withServices } from './services.ts';

type Setting = ReturnType<typeof settingBody>;

/** The command line's text as the API's JSON value: numbers and booleans for their kinds, else the text (then refused with its bound). */
function valueOf(name: string, text: string): unknown {
  const kind = findSetting(name)?.kind;
  if (kind === 'integer' && /^-?\d+$/.test(text)) {
    return Number(text);
  }
  if (kind === 'boolean' && (text === 'true' || text === 'false')) {
    return text === 'true';
  }
  return text;
}

function print(flags: Flags, settings: Setting[], single: boolean): void {
  if (hasFlag(flags, 'json')) {
    printJson(single ? settings[0] : { settings });
    return;
  }
  printTable(
    ['NAME', 'VALUE', 'DEFAULT', 'VERSION', 'UPDATED BY'],
    settings.map((entry) => [
      entry.name,
      `${String(entry.value)}${entry.invalid_stored_value ? ' (stored value invalid)' : ''}`,
      String(entry.default),
      entry.version,
      entry.updated_by,
    ]),
  );
}

/** `settings list [--group G]` · `settings get NAME` · `settings set NAME VALUE --reason R [--version N]`: as /ops/settings. */
export async function settings(flags: Flags): Promise<number> {
  const [action, name, text] = flags.positional;
  const version = integerFlag(flags, 'version');
  const result = await withDatabase(
    (pool, { url, config }) =>
      withServices(pool, url, config, async ({ settings: service }) => {
        if (action === 'set') {
          return service.change([{ name: name!, value: valueOf(name!, text!), version }], flag(flags, 'reason'), cliChange());
        }
        return action === 'get' ? [service.get(name!)] : service.list(flag(flags, 'group'));
      }),
    { schema: 'current' },
  );
  print(flags, result.map(settingBody), action !== 'list');
  return 0;
}
