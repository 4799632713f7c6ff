-- The application's job queue (issue 47, ADR 0133): work a module adds in its own transaction and
-- any instance runs. Lean rows, because every job is written at least three times (add, claim,
-- finish): no attempts table, the last few errors kept on the row, and only the indexes the claim,
-- the dedup key, lease takeover and the ops reads need.
-- States are the origin's: available, scheduled (run_at ahead at add), retryable (waiting for its
-- backoff), running, completed, discarded, cancelled. A scheduled or retryable job whose run_at has
-- passed is claimable as it stands: no extra write moves it to available first.
create table queue_jobs (
  id bigint generated always as identity primary key,
  task text not null check (task ~ '^[a-z][a-z0-9_]{0,62}$'),
  queue text not null check (queue ~ '^[a-z][a-z0-9_]{0,62}$'),
  -- Bounded in code (64 KiB of JSON) before the insert; never returned by the ops API nor logged.
  payload jsonb not null,
  state text not null check (state in ('available', 'scheduled', 'retryable', 'running', 'completed', 'discarded', 'cancelled')),
  -- Lower runs first, as in the job definitions; -1000..1000 leaves room either side of 0.
  -- squawk-ignore prefer-bigint-over-int
  priority integer not null default 0 check (priority between -1000 and 1000),
  run_at timestamptz not null default now(),
  -- Attempts started, the one running included; an attempt released by a stopping instance is not counted.
  -- squawk-ignore prefer-bigint-over-int
  attempts integer not null default 0 check (attempts >= 0),
  -- squawk-ignore prefer-bigint-over-int
  max_attempts integer not null check (max_attempts between 1 and 100),
  -- Deduplicates among unfinished jobs: a second add with a key already waiting or running is ignored.
  key text check (length(key) between 1 and 200),
  locked_by text,
  locked_until timestamptz,
  -- The last five attempts' errors, [{at, attempt, message}] with messages of at most 300 characters.
  errors jsonb,
  created_at timestamptz not null default now(),
  attempted_at timestamptz,
  finalized_at timestamptz,
  constraint queue_jobs_lease_while_running check ((state = 'running') = (locked_until is not null and locked_by is not null)),
  constraint queue_jobs_finalized_when_finished check ((state in ('completed', 'discarded', 'cancelled')) = (finalized_at is not null))
);

-- The claim: per queue, the next jobs by priority, then due time, then id. Partial, so finished
-- jobs (most of the table) never enter it and it stays as small as the backlog.
create index queue_jobs_claim_idx on queue_jobs (queue, priority, run_at, id)
  where state in ('available', 'scheduled', 'retryable');

-- The dedup key: unique among unfinished jobs only, so a key is free again once its job finished,
-- and `on conflict ... do nothing` makes the second add wait for the first's transaction.
create unique index queue_jobs_key_idx on queue_jobs (key)
  where key is not null and state in ('available', 'scheduled', 'retryable', 'running');

-- Lease takeover: running jobs whose lease has passed. As small as the work in progress.
create index queue_jobs_lease_idx on queue_jobs (locked_until) where state = 'running';

-- Finished jobs by state and age: the retention job's purge (ops.history_retention, one range per
-- finished state) and the overview's discards of the last day, whose cost follows the discards,
-- not every job finished that day. Ops lists read newest first on the primary key; the overview's
-- count of unfinished jobs reads the claim and lease indexes. No index on state alone, which every
-- claim and finish would rewrite.
create index queue_jobs_finalized_idx on queue_jobs (state, finalized_at) where finalized_at is not null;

-- Queues an operator paused; a queue without a row runs. Workers read it in every claim.
create table job_queues (
  name text primary key check (name ~ '^[a-z][a-z0-9_]{0,62}$'),
  paused boolean not null default false,
  paused_at timestamptz,
  pause_reason text check (length(pause_reason) between 1 and 500),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint job_queues_paused_at_when_paused check (paused = (paused_at is not null))
);
