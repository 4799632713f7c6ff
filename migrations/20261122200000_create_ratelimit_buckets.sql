-- Shared rate-limit buckets: one row per hashed key (SHA-256 of limiter name and key, so no email
-- or address is stored) holding its GCRA theoretical arrival time on the database clock.
-- UNLOGGED: no WAL per decision; a crash or failover empties the table, which only resets limits.
-- No index on tat, so a decision's update stays HOT; cleanup walks the primary key instead.
create unlogged table ratelimit_buckets (
  key bytea primary key check (length(key) = 32),
  tat timestamptz not null
) with (fillfactor = 70);
