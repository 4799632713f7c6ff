-- Ops reads by index as job_runs grows (issue 20). The newest started run of each job, found in one
-- entry even when the job has not run for a long time (the planner otherwise walks the primary key
-- backwards through every newer run of other jobs).
create index job_runs_started_job_id_idx on job_runs (job, id desc) where started_at is not null;
-- Queued and running runs by queue: the overview's counts read these few rows, not the history.
create index job_runs_active_queue_idx on job_runs (queue, state) where state in ('queued', 'running');
