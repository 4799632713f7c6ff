-- The example module's own table. The application's migrations run with Backplane's, in one
-- order by version under one advisory lock; name new ones <UTC timestamp>_<what it does>.sql.
create table notes (
  id bigint generated always as identity primary key,
  title text not null check (length(title) between 1 and 200),
  body text not null default '' check (length(body) <= 10000),
  created_by text not null,
  created_at timestamptz not null default now()
);
-- Retention deletes by age; listing pages newest first with the id as tie-breaker.
create index notes_created_at_idx on notes (created_at, id);
