-- Runtime settings: the value an operator set for a setting declared in code (no row = its
-- default) and every change. Versions only grow: rows are never deleted.
create table settings_values (
  name text primary key,
  value jsonb not null,
  version integer not null check (version > 0),
  updated_at timestamptz not null default now(),
  updated_by_kind text not null,
  updated_by_id text not null,
  updated_by text not null
);

create table settings_history (
  id bigint generated always as identity primary key,
  name text not null,
  old_value jsonb not null,
  new_value jsonb not null,
  version integer not null,
  reason text not null check (length(reason) between 1 and 500),
  actor_kind text not null,
  actor_id text not null,
  actor_label text not null,
  request_id text not null default '',
  changed_at timestamptz not null default now()
);
create index settings_history_name_id_idx on settings_history (name, id desc);
-- For the retention job (ops.history_retention).
create index settings_history_changed_at_idx on settings_history (changed_at);

-- Any write, through the service or by hand, tells every instance to reload; delivered at commit.
create function notify_settings_changed() returns trigger language plpgsql as $$
begin
  perform pg_notify('backplane_settings', new.name);
  return null;
end $$;

create trigger settings_values_changed after insert or update on settings_values
  for each row execute function notify_settings_changed();
