import { changedBy } from '../../platform/caller.ts';
import { routeDefiner } from '../../platform/http/route.ts';
import { changeDefinition } from './changeDefinition.ts';
import { getDefinition, listDefinitionHistory, listDefinitions, listRuns } from './listings.ts';
import { describeJobs } from './overview.ts';
import type { JobsServiceDeps } from './ports.ts';
import { requestRun } from './requestRun.ts';
import { runRoutes } from './runRoutes.ts';
import { Definition, DefinitionChange, DefinitionHistoryPage, DefinitionList, HistoryQuery, JobParams, Overview, Run, RunPage, RunsQuery } from './schemas.ts';

const defineRoute = routeDefiner<JobsServiceDeps>();

export const jobsRoutes = [
  defineRoute({
    method: 'GET',
    path: '/ops/jobs/overview',
    permission: 'ops.jobs.read',
    tag: 'ops',
    summary: 'Jobs at a glance: next and last runs, the last day by state, queues and their consumers, failing jobs',
    description: 'Each underlying query is bounded by 5 s (503 `jobs_query_timeout`).',
    responses: { 200: Overview },
    problems: ['jobs_query_timeout'],
    handler: ({ deps }) => describeJobs(deps),
  }),
  defineRoute({
    method: 'GET',
    path: '/ops/jobs/definitions',
    permission: 'ops.jobs.read',
    tag: 'ops',
    summary: 'Job definitions: the configuration in force, the code defaults and the next run',
    responses: { 200: DefinitionList },
    handler: ({ deps }) => listDefinitions(deps),
  }),
  defineRoute({
    method: 'GET',
    path: '/ops/jobs/definitions/{job}',
    permission: 'ops.jobs.read',
    tag: 'ops',
    summary: 'One job definition, with the version to send back with a change',
    params: JobParams,
    responses: { 200: Definition },
    problems: ['job_not_found'],
    handler: ({ params, deps }) => getDefinition(deps, params.job),
  }),
  defineRoute({
    method: 'GET',
    path: '/ops/jobs/definitions/{job}/history',
    permission: 'ops.jobs.read',
    tag: 'ops',
    summary: 'Changes of a job definition, newest first',
    description: 'Pages with `before` (the `next_cursor` of the previous page). Bounded by 5 s (503 `jobs_query_timeout`).',
    params: JobParams,
    query: HistoryQuery,
    responses: { 200: DefinitionHistoryPage },
    problems: ['job_not_found', 'jobs_query_timeout'],
    handler: ({ params, query, deps }) => listDefinitionHistory(deps, params.job, query),
  }),
  defineRoute({
    method: 'PUT',
    path: '/ops/jobs/definitions/{job}',
    permission: 'ops.jobs.write',
    tag: 'ops',
    summary: 'Enable, disable or reschedule a job, with a reason',
    description:
      'Only the fields sent change; null returns a field to its code default. Disabling lets a running run finish and creates no new slots; ' +
      're-enabling or rescheduling counts slots from now on. Every instance follows within a second. Recorded in the job history and audited as `jobs.definition.changed`. ' +
      "A schedule that runs more often than the job's `min_interval_seconds` is 422 `validation_failed`. With `version` (from the last read), a change made meanwhile is 409 `job_definition_version_conflict`.",
    params: JobParams,
    body: DefinitionChange,
    responses: { 200: Definition },
    problems: ['job_not_found', 'job_reason_required', 'invalid_job_schedule', 'job_definition_version_conflict'],
    handler: ({ params, body, caller, deps }) => changeDefinition(deps, params.job, body, changedBy(caller)),
  }),
  defineRoute({
    method: 'POST',
    path: '/ops/jobs/definitions/{job}/run',
    permission: 'ops.jobs.run',
    tag: 'ops',
    summary: 'Queue a run of a job now',
    description: 'Refused while a run of the job is queued or running, or within a minute after its last run finished (429 `job_run_limited`).',
    params: JobParams,
    status: 202,
    responses: { 202: Run },
    problems: ['job_not_found', 'job_definition_disabled', 'job_run_limited'],
    handler: ({ params, caller, deps }) => requestRun(deps, params.job, { accountId: caller.actor.id, requestId: caller.requestId }),
  }),
  defineRoute({
    method: 'GET',
    path: '/ops/jobs/runs',
    permission: 'ops.jobs.read',
    tag: 'ops',
    summary: 'Job runs, newest first, by job and state',
    query: RunsQuery,
    responses: { 200: RunPage },
    problems: ['jobs_query_timeout'],
    handler: ({ query, deps }) => listRuns(deps, query),
  }),
  ...runRoutes,
];
