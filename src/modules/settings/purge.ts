// Imported directly by the retention task threads (not through index.ts), so a thread loads no HTTP code.
import type { Queryable } from '../../platform/db/pool.ts';

// Batches keep each statement short; the caller repeats until a batch comes back short.
const purgeSettingsHistorySql = `
with doomed as (
  select id from settings_history where changed_at < $1 order by changed_at limit $2
)
delete from settings_history h using doomed where h.id = doomed.id`;

/** Deletes up to `limit` setting changes made before the cutoff (ops.history_retention); returns how many. */
export async function purgeSettingsHistory(db: Queryable, cutoff: Date, limit: number): Promise<number> {
  return (await db.query(purgeSettingsHistorySql, [cutoff, limit])).rowCount ?? 0;
}
