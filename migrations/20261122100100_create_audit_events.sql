-- Audit events: append-only, partitioned by UTC month of occurred_at (ADR 0050), so retention drops
-- whole expired months instead of deleting their rows. A trigger refuses UPDATE and TRUNCATE, and
-- DELETE unless the transaction declared itself the retention purge
-- (set_config('backplane.audit_purge', 'on', true)).
create sequence audit_events_id_seq as bigint;

-- The key must hold the partition column; ids still come from one sequence, so they stay unique.
create table audit_events (
  id bigint not null default nextval('audit_events_id_seq'),
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
  metadata jsonb not null default '{}',
  primary key (id, occurred_at)
) partition by range (occurred_at);

alter sequence audit_events_id_seq owned by audit_events.id;

-- Events of a month that has no partition (backdated, or far ahead) land here: an insert never fails.
create table audit_events_default partition of audit_events default;

-- Declared on the parent, so every partition gets them.
create index audit_events_occurred_at_idx on audit_events (occurred_at);
create index audit_events_action_idx on audit_events (action, id desc);
create index audit_events_actor_idx on audit_events (actor_id, id desc) where actor_id <> '';
create index audit_events_resource_idx on audit_events (resource_type, resource_id, id desc) where resource_type <> '';
create index audit_events_request_idx on audit_events (request_id) where request_id <> '';

create function refuse_audit_event_change() returns trigger language plpgsql as $$
begin
  raise exception 'audit_events is append-only: % refused', tg_op;
end $$;

-- Row triggers on the parent are cloned onto every partition, present and future.
create trigger audit_events_no_update before update on audit_events
  for each row execute function refuse_audit_event_change();
-- The purge's permission is checked in the WHEN clause, so its deletes call no function per row.
create trigger audit_events_no_delete before delete on audit_events
  for each row when (current_setting('backplane.audit_purge', true) is distinct from 'on')
  execute function refuse_audit_event_change();
-- Statement triggers are not cloned: each partition gets its own TRUNCATE guard.
create trigger audit_events_no_truncate before truncate on audit_events
  for each statement execute function refuse_audit_event_change();
create trigger audit_events_no_truncate before truncate on audit_events_default
  for each statement execute function refuse_audit_event_change();

-- Creates the missing monthly partitions audit_events_pYYYYMM (UTC months) covering [from_at, to_at].
-- Each is created alone and then attached, which locks the parent only in SHARE UPDATE EXCLUSIVE
-- mode (reads and writes go on); rows of that month already in the default partition are moved
-- into it first, so creation never fails. Returns how many partitions it created.
create function ensure_audit_event_partitions(from_at timestamptz, to_at timestamptz) returns integer
language plpgsql as $$
declare
  month timestamp := date_trunc('month', from_at at time zone 'utc');
  lower_bound timestamptz;
  upper_bound timestamptz;
  partition_name text;
  moving boolean;
  purge_flag text := coalesce(current_setting('backplane.audit_purge', true), '');
  created integer := 0;
begin
  if to_at - from_at > interval '20 years' then
    raise exception 'ensure_audit_event_partitions: a range of at most 20 years, not % to %', from_at, to_at;
  end if;
  -- Primaries starting together and the retention job may call this at once.
  perform pg_advisory_xact_lock(hashtextextended('backplane.audit_event_partitions', 0));
  while month at time zone 'utc' <= to_at loop
    lower_bound := month at time zone 'utc';
    upper_bound := (month + interval '1 month') at time zone 'utc';
    partition_name := 'audit_events_p' || to_char(month, 'YYYYMM');
    if to_regclass(partition_name) is null then
      moving := exists (select 1 from audit_events_default where occurred_at >= lower_bound and occurred_at < upper_bound);
      if moving then
        create temp table if not exists audit_events_moving (like audit_events) on commit drop;
        perform set_config('backplane.audit_purge', 'on', true);
        with moved as (
          delete from audit_events_default where occurred_at >= lower_bound and occurred_at < upper_bound returning *
        )
        insert into audit_events_moving select * from moved;
        perform set_config('backplane.audit_purge', purge_flag, true);
      end if;
      execute format('create table %I (like audit_events including defaults including constraints)', partition_name);
      execute format('alter table audit_events attach partition %I for values from (%L) to (%L)', partition_name, lower_bound, upper_bound);
      execute format('create trigger audit_events_no_truncate before truncate on %I for each statement execute function refuse_audit_event_change()', partition_name);
      if moving then
        insert into audit_events select * from audit_events_moving;
        delete from audit_events_moving;
      end if;
      created := created + 1;
    end if;
    month := month + interval '1 month';
  end loop;
  return created;
end $$;

select ensure_audit_event_partitions(now() - interval '1 month', now() + interval '3 months');
