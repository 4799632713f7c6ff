-- Each instance's latest runtime snapshot (version, heap in use, event-loop delay p99, pool in use
-- and waiting, uptime), written after its heartbeat, so an operator sees every instance side by
-- side, not only the one that answered (ADR 0128). Nullable without a default: adding it rewrites
-- nothing; null until the instance's first snapshot.
alter table release_instances add column runtime jsonb;
