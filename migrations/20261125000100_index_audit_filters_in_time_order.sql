-- The audit list pages by (occurred_at, id) (ADR 0054), so each filter an index serves gets an index
-- in that order: a page of one actor's, request's, resource's or action's events reads its entries
-- newest first and stops at the page, and the scan bound counts that filter's own entries rather
-- than every event of the window. The (…, id desc) indexes they replace served the former id order.
drop index audit_events_action_idx;
drop index audit_events_actor_idx;
drop index audit_events_resource_idx;
drop index audit_events_request_idx;
create index audit_events_action_time_idx on audit_events (action, occurred_at desc, id desc);
create index audit_events_actor_time_idx on audit_events (actor_id, occurred_at desc, id desc) where actor_id <> '';
create index audit_events_resource_time_idx on audit_events (resource_type, resource_id, occurred_at desc, id desc) where resource_type <> '';
create index audit_events_request_time_idx on audit_events (request_id, occurred_at desc, id desc) where request_id <> '';

-- Every fold deletes the deltas it moved; statistics read the rest by the hour index, and dead
-- entries there cost them as much as live ones (40 ms of a 60 ms read at 830k dead rows). Vacuum
-- after a thousand dead rows instead of a fifth of the table.
alter table audit_event_rollup_deltas set (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000);
