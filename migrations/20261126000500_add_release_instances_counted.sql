-- How many running instances this instance has counted, as it holds the count in memory (never
-- more than it held before its last beat): an instance decides rate limits alone with its share
-- of a limit only once every running instance has counted at least as many (ADR 0020, amended
-- 2026-11-26). 0 until its second beat. A constant default: adding it rewrites nothing.
alter table release_instances add column counted integer not null default 0;
