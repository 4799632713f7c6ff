import { instanceEntry, selectInstances } from '../modules/releases/index.ts';
import { type Flags, UsageError, hasFlag, integerFlag } from './args.ts';
import { withDatabase } from './database.ts';
import { printJson, printTable } from './output.ts';

/** `instances list [--running] [--limit N]`: as GET /ops/releases/instances, newest first. */
export async function instances(flags: Flags): Promise<number> {
  const limit = integerFlag(flags, 'limit') ?? 50;
  if (limit < 1 || limit > 200) {
    throw new UsageError('--limit must be between 1 and 200');
  }
  const rows = await withDatabase(
    (pool, { config }) =>
      selectInstances(pool, {
        staleAfterSeconds: 3 * config.heartbeatSeconds,
        afterId: undefined,
        running: hasFlag(flags, 'running') ? true : undefined,
        limit,
      }),
    { schema: 'current' },
  );
  const entries = rows.map(instanceEntry);

  if (hasFlag(flags, 'json')) {
    printJson({ instances: entries });
  } else {
    printTable(
      ['INSTANCE', 'VERSION', 'COMMIT', 'HOST', 'PID', 'STARTED', 'LAST SEEN', 'STATE'],
      entries.map((entry) => [
        entry.instance_id,
        `${entry.version}${entry.modified ? '+modified' : ''}`,
        entry.commit?.slice(0, 12),
        entry.host,
        entry.pid,
        entry.started_at,
        entry.last_seen_at,
        entry.running ? 'running' : entry.stopped_at ? 'stopped' : 'silent',
      ]),
    );
  }
  return 0;
}
