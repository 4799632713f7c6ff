import { CLI_ACTOR, recordAuditEvent } from '../modules/audit/index.ts';
import { type SettingChange, changeSettings } from '../modules/settings/index.ts';
import { type Flags, UsageError, flag, hasFlag } from './args.ts';
import { withDatabase } from './database.ts';

const USAGE = 'usage: backplane maintenance on|off [--message M] [--retry-after 5m] --reason R';

/**
 * `maintenance on|off [--message M] [--retry-after D] --reason R`: the break-glass switch. Writes
 * the settings through the same path as PUT /ops/settings (history, audit as system:cli), so
 * running instances follow within a second and instances started later start in that mode.
 */
export async function maintenance(flags: Flags): Promise<number> {
  const [action, extra] = flags.positional;
  if ((action !== 'on' && action !== 'off') || extra !== undefined) {
    throw new UsageError(USAGE);
  }
  const changes: SettingChange[] = [];
  if (hasFlag(flags, 'message')) {
    changes.push({ name: 'maintenance.message', value: flag(flags, 'message') });
  }
  if (hasFlag(flags, 'retry-after')) {
    changes.push({ name: 'maintenance.retry_after', value: flag(flags, 'retry-after') });
  }
  // Last, so the message and delay are in place when the switch turns.
  changes.push({ name: 'maintenance.enabled', value: action === 'on' });
  const results = await withDatabase(
    (pool) => changeSettings(pool, (tx, event) => recordAuditEvent(tx, event).then(() => undefined), changes, flag(flags, 'reason'), { actor: CLI_ACTOR }),
    { schema: 'current' },
  );
  const value = (name: string) => results.find((entry) => entry.definition.name === name)?.value;
  console.log(
    action === 'on'
      ? `maintenance on${value('maintenance.message') ? `: ${String(value('maintenance.message'))}` : ''}; running instances follow within a second`
      : 'maintenance off; running instances follow within a second',
  );
  return 0;
}
