import type { Queryable } from '../../../platform/db/pool.ts';

// One row by primary key; a job no instance has recorded yet has no override.
const selectJobEnabledSql = `
select coalesce((select enabled from job_definitions where name = $1), $2) as enabled`;

/**
 * Whether a job is enabled now: the operator's override, else `byDefault` (the definition's
 * `enabled`, true unless it says otherwise). For a running job that checks it may go on.
 */
export async function jobEnabled(db: Queryable, name: string, byDefault = true): Promise<boolean> {
  return (await db.query<{ enabled: boolean }>(selectJobEnabledSql, [name, byDefault])).rows[0]!.enabled;
}
