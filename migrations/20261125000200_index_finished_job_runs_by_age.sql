-- /ops/retention counts the finished runs past ops.history_retention exactly, and the purge deletes
-- them oldest first: both by this predicate. With it in the index the count reads index entries
-- only (400k past the cutoff at 1M runs: 58 ms through job_runs_created_at_idx and the heap).
create index job_runs_finished_created_at_idx on job_runs (created_at) where state in ('succeeded', 'failed');
