import type { Queryable } from '../../platform/db/pool.ts';
import { selectBacklog, selectRecentOutcomes } from './store/revocations.ts';

/** The revocation queue for the jobs overview: depth, due, held by a run, oldest due, last day's outcomes. */
export async function readRevocationBacklog(db: Queryable) {
  const backlog = await selectBacklog(db);
  return {
    depth: backlog.depth,
    due: backlog.due,
    inProgress: backlog.leased,
    oldestDueAt: backlog.oldestDueAt,
    last24h: await selectRecentOutcomes(db),
  };
}
