import type { InstanceRow } from './store.ts';

/** An instance as GET /ops/releases/instances and `backplane instances list --json` show it. */
export const instanceEntry = (row: InstanceRow) => ({
  instance_id: row.instance_id,
  version: row.version,
  commit: row.commit,
  build_time: row.build_time?.toISOString() ?? null,
  modified: row.modified,
  runtime_version: row.runtime_version,
  host: row.host,
  pid: row.pid,
  started_at: row.started_at.toISOString(),
  last_seen_at: row.last_seen_at.toISOString(),
  stopped_at: row.stopped_at?.toISOString() ?? null,
  running: row.running,
  runtime: row.running ? row.runtime : null,
});
