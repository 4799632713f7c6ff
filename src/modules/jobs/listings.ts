import type { z } from 'zod';
import type { JobsServiceDeps } from './ports.ts';
import { withReadTimeout } from './readTimeout.ts';
import { jobNotFound } from './errors.ts';
import type { RegisteredJob } from './definitions.ts';
import type { Definition, DefinitionHistoryPage, DefinitionList, HistoryQuery, RunPage, RunsQuery } from './schemas.ts';
import { selectDefinitionHistory, selectDefinitionRows } from './store/definitions.ts';
import { selectRuns } from './store/reads.ts';
import { definitionHistoryView, definitionView, runView } from './views.ts';
import { keysetPage, rowsForPage } from '../../platform/paging.ts';

/** Every job defined in code, with the configuration in force and its defaults. */
export async function listDefinitions(deps: JobsServiceDeps): Promise<z.infer<typeof DefinitionList>> {
  const jobs = deps.jobs.list();
  const rows = await withReadTimeout(deps.pool, deps.queryTimeoutMs, (tx) =>
    selectDefinitionRows(
      tx,
      jobs.map((job) => job.name),
    ),
  );
  return { definitions: jobs.map((job, index) => definitionView(job, rows[index]!)) };
}

function knownJob(deps: JobsServiceDeps, name: string): RegisteredJob {
  const job = deps.jobs.get(name);
  if (!job) {
    throw jobNotFound(name);
  }
  return job;
}

/** One job defined in code, as the list shows it. */
export async function getDefinition(deps: JobsServiceDeps, name: string): Promise<z.infer<typeof Definition>> {
  const job = knownJob(deps, name);
  const [row] = await withReadTimeout(deps.pool, deps.queryTimeoutMs, (tx) => selectDefinitionRows(tx, [job.name]));
  return definitionView(job, row!);
}

/** A job's definition changes, newest first, in keyset pages. */
export async function listDefinitionHistory(
  deps: JobsServiceDeps,
  name: string,
  query: z.infer<typeof HistoryQuery>,
): Promise<z.infer<typeof DefinitionHistoryPage>> {
  const job = knownJob(deps, name);
  const rows = await withReadTimeout(deps.pool, deps.queryTimeoutMs, (tx) => selectDefinitionHistory(tx, job.name, query.before, rowsForPage(query.limit)));
  const { page, nextCursor } = keysetPage(rows, query.limit);
  return {
    changes: page.map(definitionHistoryView),
    ...nextCursor,
  };
}

/** Runs newest first, by job and state, in keyset pages. */
export async function listRuns(deps: JobsServiceDeps, query: z.infer<typeof RunsQuery>): Promise<z.infer<typeof RunPage>> {
  const rows = await withReadTimeout(deps.pool, deps.queryTimeoutMs, (tx) =>
    selectRuns(tx, { job: query.job, state: query.state, beforeId: query.cursor, limit: rowsForPage(query.limit) }),
  );
  const { page, nextCursor } = keysetPage(rows, query.limit);
  return {
    runs: page.map(runView),
    ...nextCursor,
  };
}
