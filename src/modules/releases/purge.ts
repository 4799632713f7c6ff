// Imported directly by the retention task threads (not through index.ts), so a thread loads no HTTP code.
import type { Queryable } from '../../platform/db/pool.ts';

// Stopping sets last_seen_at too, so one column covers instances stopped and instances gone
// silent (crashed, killed) alike; a running instance's heartbeat keeps it recent.
const purgeReleaseInstancesSql = `
with doomed as (
  select id from release_instances where last_seen_at < $1 order by last_seen_at limit $2
)
delete from release_instances r using doomed where r.id = doomed.id`;

/**
 * Deletes up to `limit` instance records stopped or unseen since before the cutoff
 * (releases.instance_retention); returns how many.
 */
export async function purgeReleaseInstances(db: Queryable, cutoff: Date, limit: number): Promise<number> {
  return (await db.query(purgeReleaseInstancesSql, [cutoff, limit])).rowCount ?? 0;
}
