import type { z } from 'zod';
import type { JobsServiceDeps } from './ports.ts';
import { withReadTimeout } from './readTimeout.ts';
import type { DefinitionList, RunPage, RunsQuery } from './schemas.ts';
import { selectDefinitionRows } from './store/definitions.ts';
import { selectRuns } from './store/reads.ts';
import { definitionView, runView } from './views.ts';

/** Every job defined in code, with the configuration in force and its defaults. */
export async function listDefinitions(deps: JobsServiceDeps): Promise<z.infer<typeof DefinitionList>> {
  const jobs = deps.jobs.list();
  const rows = await selectDefinitionRows(deps.pool, jobs.map((job) => job.name));
  return { definitions: jobs.map((job, index) => definitionView(job, rows[index]!)) };
}

/** Runs newest first, by job and state, in keyset pages. */
export async function listRuns(deps: JobsServiceDeps, query: z.infer<typeof RunsQuery>): Promise<z.infer<typeof RunPage>> {
  const rows = await withReadTimeout(deps.pool, deps.queryTimeoutMs, (tx) =>
    selectRuns(tx, { job: query.job, state: query.state, beforeId: query.cursor, limit: query.limit + 1 }),
  );
  const page = rows.slice(0, query.limit);
  return {
    runs: page.map(runView),
    ...(rows.length > query.limit ? { next_cursor: page.at(-1)!.id } : {}),
  };
}
