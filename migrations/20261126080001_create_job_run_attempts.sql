-- Every attempt of a job run, so an operator reads each attempt's instance, timings and error, not
-- only the latest one job_runs keeps (ADR 0128). Written by the statements that claim and finish an
-- attempt; deleted with its run. An attempt released by a stopping instance is deleted too: it did
-- not count.
create table job_run_attempts (
  run_id bigint not null references job_runs (id) on delete cascade,
  -- An attempt number stays below a run's max_attempts (at most 10), and job_runs.attempt is integer too.
  -- squawk-ignore prefer-bigint-over-int
  attempt integer not null check (attempt >= 1),
  instance_id text not null,
  started_at timestamptz not null default now(),
  finished_at timestamptz,
  outcome text check (outcome in ('succeeded', 'failed', 'lost')),
  error text check (length(error) <= 500),
  primary key (run_id, attempt)
);
