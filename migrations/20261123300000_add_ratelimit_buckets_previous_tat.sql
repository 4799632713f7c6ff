-- The TAT a decision's update replaced, written by that same update, so the decision statement can
-- return how many hits it admitted on every supported PostgreSQL: `RETURNING old.tat` needs 18.
-- Read only from the row the statement itself just returned; null on a row the statement inserted.
-- Nullable without a default: adding it rewrites nothing; no index on it, so updates stay HOT.
alter table ratelimit_buckets add column previous_tat timestamptz;
