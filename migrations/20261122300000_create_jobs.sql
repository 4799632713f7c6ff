-- Background jobs. Definitions live in code; this table holds what operators override (NULL = the
-- code default) and the instant from which the job's slots count. One job_runs row per scheduled
-- slot, unique per (job, slot), so a slot runs once however many instances tick.
create table job_definitions (
  name text primary key check (name ~ '^[a-z][a-z0-9_]{0,62}$'),
  enabled boolean,
  schedule text check (length(schedule) between 1 and 100),
  -- Slots before this instant never run: set when the job is first seen, re-enabled or rescheduled.
  scheduled_since timestamptz not null default now(),
  version integer not null default 0,
  updated_at timestamptz,
  updated_by text
);

create table job_definition_history (
  id bigint generated always as identity primary key,
  job text not null,
  version integer not null,
  old_config jsonb not null,
  new_config jsonb not null,
  reason text not null check (length(reason) between 1 and 500),
  actor_id text,
  actor_label text,
  request_id text,
  client_address text,
  user_agent text check (length(user_agent) <= 512),
  changed_at timestamptz not null default now()
);
create index job_definition_history_job_idx on job_definition_history (job, id desc);
create index job_definition_history_changed_at_idx on job_definition_history (changed_at);

create table job_runs (
  id bigint generated always as identity primary key,
  job text not null,
  -- The scheduled instant; NULL for a run an operator asked for.
  slot timestamptz,
  trigger text not null check (trigger in ('schedule', 'manual')),
  queue text not null,
  state text not null default 'queued' check (state in ('queued', 'running', 'succeeded', 'failed')),
  attempts integer not null default 0 check (attempts >= 0),
  max_attempts integer not null check (max_attempts between 1 and 100),
  run_after timestamptz not null default now(),
  lease_expires_at timestamptz,
  instance_id text,
  requested_by text,
  request_id text,
  error text check (length(error) <= 500),
  created_at timestamptz not null default now(),
  started_at timestamptz,
  finished_at timestamptz,
  constraint job_runs_slot_matches_trigger check ((trigger = 'schedule') = (slot is not null)),
  constraint job_runs_lease_while_running check ((state = 'running') = (lease_expires_at is not null)),
  constraint job_runs_job_slot_key unique (job, slot)
);
create index job_runs_due_idx on job_runs (run_after, id) where state = 'queued';
create index job_runs_queued_job_idx on job_runs (job) where state = 'queued';
create index job_runs_leases_idx on job_runs (lease_expires_at) where state = 'running';
-- A job runs one at a time across the cluster; a second claim fails here rather than overlap.
create unique index job_runs_one_running_per_job on job_runs (job) where state = 'running';
create index job_runs_job_id_idx on job_runs (job, id desc);
create index job_runs_created_at_idx on job_runs (created_at);

-- Instances whose job workers consume queues, kept fresh by a heartbeat while they run.
create table job_consumers (
  instance_id text primary key,
  queues text[] not null,
  workers integer not null check (workers > 0),
  started_at timestamptz not null default now(),
  seen_at timestamptz not null default now()
);
