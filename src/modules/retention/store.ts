import type { Queryable } from '../../platform/db/pool.ts';

const selectCutoffsSql = `
select now() - make_interval(secs => u.seconds) as cutoff
from unnest($1::float8[]) with ordinality as u(seconds, position)
order by u.position`;

/** now() minus each retention, in the order given: one database instant for the whole run. */
export async function selectCutoffs(db: Queryable, seconds: number[]): Promise<Date[]> {
  return (await db.query<{ cutoff: Date }>(selectCutoffsSql, [seconds])).rows.map((row) => row.cutoff);
}
