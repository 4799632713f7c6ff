-- One row per instance start: what runs where, kept alive by a heartbeat.
create table release_instances (
  id bigint generated always as identity primary key,
  instance_id text not null unique,
  version text not null check (length(version) <= 100),
  commit text check (length(commit) <= 64),
  build_time timestamptz,
  modified boolean not null default false,
  runtime_version text not null,
  host text not null check (length(host) <= 255),
  pid integer not null,
  started_at timestamptz not null default now(),
  last_seen_at timestamptz not null default now(),
  stopped_at timestamptz
);
create index release_instances_stopped_at_idx on release_instances (stopped_at);
create index release_instances_last_seen_at_idx on release_instances (last_seen_at);
