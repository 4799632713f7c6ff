import type { AgingTarget } from '../../platform/db/aging.ts';

/** The job that enforces every kind below. */
export const RETENTION_JOB = 'retention';

/** The order the job purges the kinds and GET /ops/retention lists them. Names are public API. */
export const RETENTION_ORDER: readonly string[] = ['audit_events', 'settings_history', 'job_definition_history', 'job_runs', 'release_instances'];

/**
 * The targets in retention's order, whatever order they were handed in; a kind not listed above
 * goes last, in the order given. Two targets of one kind would purge and report it twice.
 */
export function orderTargets<T extends AgingTarget>(targets: readonly T[]): T[] {
  const seen = new Set<string>();
  for (const target of targets) {
    if (seen.has(target.kind)) {
      throw new Error(`retention: the kind ${target.kind} is given twice`);
    }
    seen.add(target.kind);
  }
  const rank = (target: T) => {
    const index = RETENTION_ORDER.indexOf(target.kind);
    return index === -1 ? RETENTION_ORDER.length : index;
  };
  return [...targets].sort((a, b) => rank(a) - rank(b));
}
