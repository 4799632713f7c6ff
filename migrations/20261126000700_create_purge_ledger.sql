-- What each committed batch (or dropped month) of a retention purge deleted, written in the same
-- transaction as the delete, so a purge killed part-way loses neither its rows nor their count
-- (issue 30 item 10, ADR 0051). The attempt that reports a kind moves its rows into one
-- retention.purged event in one transaction: earlier attempts' and earlier runs' rows included.
-- Insert-only while a purge runs, so its connections never wait on one another here.
create table purge_ledger (
  id bigint generated always as identity primary key,
  kind text not null check (length(kind) between 1 and 100),
  -- The job run whose attempt deleted the rows; null for a purge run outside a job.
  run_id bigint,
  rows bigint not null check (rows >= 0),
  partitions_dropped integer not null default 0 check (partitions_dropped >= 0),
  recorded_at timestamptz not null default now()
);
create index purge_ledger_kind_idx on purge_ledger (kind);
