import { type Flags, UsageError, flag, hasFlag, parseDurationSeconds } from './args.ts';
import { withDatabase } from './database.ts';
import { printJson, printTable } from './output.ts';
import { withServices } from './services.ts';

const DAY_MS = 86_400_000;
const GROUPS = ['action', 'outcome', 'actor_kind', 'resource_type', 'day'] as const;
// The same window bounds as GET /ops/audit/stats.
const DEFAULT_DAYS = 7;
const MAX_DAYS = 90;

/** An RFC 3339 time, or a Go duration counted back from now ("24h" = a day ago). */
function instant(name: string, text: string | undefined, now: Date): Date | undefined {
  if (text === undefined) {
    return undefined;
  }
  const seconds = parseDurationSeconds(text);
  if (seconds !== undefined && seconds >= 0) {
    return new Date(now.getTime() - seconds * 1000);
  }
  if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i.test(text) && !Number.isNaN(Date.parse(text))) {
    return new Date(text);
  }
  throw new UsageError(`--${name} must be an RFC 3339 time (2026-11-23T00:00:00Z) or a duration back from now (24h)`);
}

/** `audit stats [--since T] [--until T] [--group-by F]`: as GET /ops/audit/stats. */
export async function audit(flags: Flags): Promise<number> {
  const groupBy = (flag(flags, 'group-by') ?? 'action') as (typeof GROUPS)[number];
  if (!GROUPS.includes(groupBy)) {
    throw new UsageError(`--group-by must be one of ${GROUPS.join(', ')}`);
  }
  const now = new Date();
  const to = instant('until', flag(flags, 'until'), now) ?? now;
  const from = instant('since', flag(flags, 'since'), now) ?? new Date(to.getTime() - DEFAULT_DAYS * DAY_MS);
  if (from >= to) {
    throw new UsageError('--since must be before --until');
  }
  if (to.getTime() - from.getTime() > MAX_DAYS * DAY_MS) {
    throw new UsageError(`the window spans at most ${MAX_DAYS} days`);
  }
  const stats = await withDatabase((pool, { url, config }) => withServices(pool, url, config, ({ audit: queries }) => queries.stats({ from, to }, groupBy)), {
    schema: 'current',
  });
  if (hasFlag(flags, 'json')) {
    printJson({
      from: stats.from.toISOString(),
      to: stats.to.toISOString(),
      group_by: stats.groupBy,
      total: stats.total,
      groups: stats.groups,
      other: stats.other,
    });
    return 0;
  }
  console.log(`${stats.total} events from ${stats.from.toISOString()} to ${stats.to.toISOString()}, by ${stats.groupBy}`);
  printTable([groupBy.toUpperCase(), 'COUNT'], [...stats.groups.map((group) => [group.key, group.count]), ...(stats.other ? [['(other)', stats.other]] : [])]);
  return 0;
}
