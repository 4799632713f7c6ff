-- Audit statistics from an hourly rollup (issue 20, ADR 0053): counts per UTC hour by action,
-- outcome, actor kind and resource type, so a statistic reads hours x groups rows, not events.
create table audit_event_rollup (
  hour timestamptz not null,
  action text not null,
  outcome text not null,
  actor_kind text not null,
  resource_type text not null,
  count bigint not null,
  primary key (hour, action, outcome, actor_kind, resource_type)
);

-- The same counts per UTC day, so a 90-day statistic reads 90 days' groups and at most 46 hours'.
create table audit_event_rollup_daily (
  day timestamptz not null,
  action text not null,
  outcome text not null,
  actor_kind text not null,
  resource_type text not null,
  count bigint not null,
  primary key (day, action, outcome, actor_kind, resource_type)
);

-- Every statement that inserts or deletes events appends its counts here, in its own transaction:
-- insert-only, so concurrent writers never wait on one another's rollup rows, and whatever wrote
-- the events (the service, bulk SQL, COPY, a restore) is counted when it commits. A job folds these
-- into audit_event_rollup; reads add the rows not yet folded, so they are exact either way.
create table audit_event_rollup_deltas (
  hour timestamptz not null,
  action text not null,
  outcome text not null,
  actor_kind text not null,
  resource_type text not null,
  count bigint not null
);
create index audit_event_rollup_deltas_hour_idx on audit_event_rollup_deltas (hour);

create function audit_event_rollup_add() returns trigger language plpgsql as $$
begin
  insert into audit_event_rollup_deltas (hour, action, outcome, actor_kind, resource_type, count)
  select date_trunc('hour', occurred_at, 'UTC'), action, outcome, actor_kind, resource_type, count(*)
  from added group by 1, 2, 3, 4, 5;
  return null;
end $$;

create function audit_event_rollup_subtract() returns trigger language plpgsql as $$
begin
  insert into audit_event_rollup_deltas (hour, action, outcome, actor_kind, resource_type, count)
  select date_trunc('hour', occurred_at, 'UTC'), action, outcome, actor_kind, resource_type, -count(*)
  from removed group by 1, 2, 3, 4, 5;
  return null;
end $$;

-- Statement triggers on the parent see the rows of every partition a statement on it touched.
create trigger audit_events_rollup_add after insert on audit_events
  referencing new table as added for each statement execute function audit_event_rollup_add();
create trigger audit_events_rollup_subtract after delete on audit_events
  referencing old table as removed for each statement execute function audit_event_rollup_subtract();
-- Creating a month's partition deletes its rows from the default partition by name (then inserts
-- them through the parent, which adds them back): the parent's trigger does not see that delete.
create trigger audit_events_default_rollup_subtract after delete on audit_events_default
  referencing old table as removed for each statement execute function audit_event_rollup_subtract();

insert into audit_event_rollup (hour, action, outcome, actor_kind, resource_type, count)
select date_trunc('hour', occurred_at, 'UTC'), action, outcome, actor_kind, resource_type, count(*)
from audit_events group by 1, 2, 3, 4, 5;
insert into audit_event_rollup_daily (day, action, outcome, actor_kind, resource_type, count)
select date_trunc('day', hour, 'UTC'), action, outcome, actor_kind, resource_type, sum(count)
from audit_event_rollup group by 1, 2, 3, 4, 5;

-- Moves the deltas committed so far into the rollup (those of transactions still open stay for the
-- next call) and returns how many groups it touched. Takes its turn with the subtraction of a
-- detached month, which would otherwise lose to a fold adding that month's deltas back.
create function fold_audit_event_rollup() returns bigint language plpgsql as $$
declare
  touched bigint;
  emptied timestamptz[];
  emptied_days timestamptz[];
begin
  perform pg_advisory_xact_lock(hashtextextended('backplane.audit_event_rollup', 0));
  with moved as (
    delete from audit_event_rollup_deltas returning *
  ), summed as (
    select hour, action, outcome, actor_kind, resource_type, sum(count) as count
    from moved group by 1, 2, 3, 4, 5
  ), folded as (
    insert into audit_event_rollup as rollup (hour, action, outcome, actor_kind, resource_type, count)
    select hour, action, outcome, actor_kind, resource_type, count from summed order by 1, 2, 3, 4, 5
    on conflict (hour, action, outcome, actor_kind, resource_type) do update set count = rollup.count + excluded.count
    returning hour, count
  ), folded_daily as (
    insert into audit_event_rollup_daily as rollup (day, action, outcome, actor_kind, resource_type, count)
    select date_trunc('day', hour, 'UTC'), action, outcome, actor_kind, resource_type, sum(count) from summed
    group by 1, 2, 3, 4, 5 order by 1, 2, 3, 4, 5
    on conflict (day, action, outcome, actor_kind, resource_type) do update set count = rollup.count + excluded.count
    returning day, count
  )
  select (select count(*) from folded), (select array_agg(distinct hour) filter (where count = 0) from folded),
         (select array_agg(distinct day) filter (where count = 0) from folded_daily)
  into touched, emptied, emptied_days;
  -- Groups whose events were all deleted, by the hours and days the fold touched: the keys find them.
  delete from audit_event_rollup where hour = any(emptied) and count = 0;
  delete from audit_event_rollup_daily where day = any(emptied_days) and count = 0;
  return touched;
end $$;
