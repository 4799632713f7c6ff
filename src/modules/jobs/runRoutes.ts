import { changedBy } from '../../platform/caller.ts';
import { routeDefiner } from '../../platform/http/route.ts';
import type { JobsServiceDeps } from './ports.ts';
import { retryRun } from './retryRun.ts';
import { describeRun } from './runDetail.ts';
import { RetryRequest, Run, RunDetail, RunParams } from './schemas.ts';

const defineRoute = routeDefiner<JobsServiceDeps>();

/** One run and its attempts, and the retry of a failed one (ADR 0128). */
export const runRoutes = [
  defineRoute({
    method: 'GET',
    path: '/ops/jobs/runs/{id}',
    permission: 'ops.jobs.read',
    tag: 'ops',
    summary: 'One job run with every attempt: its instance, timings, outcome and error',
    description: 'Bounded by 5 s (503 `jobs_query_timeout`).',
    params: RunParams,
    responses: { 200: RunDetail },
    problems: ['job_run_not_found', 'jobs_query_timeout'],
    handler: ({ params, deps }) => describeRun(deps, params.id),
  }),
  defineRoute({
    method: 'POST',
    path: '/ops/jobs/runs/{id}/retry',
    permission: 'ops.jobs.run',
    tag: 'ops',
    summary: "Queue a new run of a failed run's job, with a reason",
    description:
      "Only a failed run can be retried (409 `job_run_not_failed`); the new run is a manual run, audited as `jobs.run.retried` with the failed run's id. " +
      'Refused while a run of the job is queued or running (429 `job_run_limited`) or the job is disabled (409 `job_definition_disabled`).',
    params: RunParams,
    body: RetryRequest,
    status: 202,
    responses: { 202: Run },
    problems: ['job_run_not_found', 'job_run_not_failed', 'job_not_found', 'job_reason_required', 'job_definition_disabled', 'job_run_limited'],
    handler: ({ params, body, caller, deps }) => retryRun(deps, params.id, body.reason, changedBy(caller)),
  }),
];
