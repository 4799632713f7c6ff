-- Audit events: append-only. A trigger refuses UPDATE and TRUNCATE, and DELETE unless the
-- transaction declared itself the retention purge (set_config('backplane.audit_purge', 'on', true)).
create table audit_events (
  id bigint generated always as identity primary key,
  occurred_at timestamptz not null default now(),
  recorded_at timestamptz not null default now(),
  actor_kind text not null check (actor_kind in ('account', 'service', 'system', 'anonymous')),
  actor_id text not null default '' check (length(actor_id) <= 200),
  actor_label text not null default '' check (length(actor_label) <= 200),
  action text not null check (length(action) <= 200 and action ~ '^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$'),
  resource_type text not null default '' check (length(resource_type) <= 200),
  resource_id text not null default '' check (length(resource_id) <= 200),
  outcome text not null check (outcome in ('success', 'failure', 'denied')),
  request_id text not null default '' check (length(request_id) <= 128),
  client_ip inet,
  user_agent text not null default '' check (length(user_agent) <= 512),
  metadata jsonb not null default '{}'
);
create index audit_events_occurred_at_idx on audit_events (occurred_at);
create index audit_events_action_idx on audit_events (action, id desc);
create index audit_events_actor_idx on audit_events (actor_id, id desc) where actor_id <> '';
create index audit_events_resource_idx on audit_events (resource_type, resource_id, id desc) where resource_type <> '';
create index audit_events_request_idx on audit_events (request_id) where request_id <> '';

create function refuse_audit_event_change() returns trigger language plpgsql as $$
begin
  if tg_op = 'DELETE' and current_setting('backplane.audit_purge', true) = 'on' then
    return old;
  end if;
  raise exception 'audit_events is append-only: % refused', tg_op;
end $$;

create trigger audit_events_append_only before update or delete on audit_events
  for each row execute function refuse_audit_event_change();
create trigger audit_events_no_truncate before truncate on audit_events
  for each statement execute function refuse_audit_event_change();
