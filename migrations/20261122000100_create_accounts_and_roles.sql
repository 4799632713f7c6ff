-- Accounts, roles and the grants between them. Permission changes notify every instance, which
-- keeps the grants in memory so the bearer check needs no query per request.
create extension if not exists pgcrypto;

create table accounts (
  id uuid primary key default gen_random_uuid(),
  email text not null,
  password_hash text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create unique index accounts_email_key on accounts (lower(email));

create table roles (
  name text primary key check (name ~ '^[a-z][a-z0-9_]{1,62}$'),
  permissions text[] not null default '{}',
  builtin boolean not null default false,
  description text not null default '',
  version integer not null default 1,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

create table account_roles (
  account_id uuid not null references accounts (id) on delete cascade,
  role_name text not null references roles (name) on delete cascade,
  granted_at timestamptz not null default now(),
  primary key (account_id, role_name)
);
create index account_roles_role_name_idx on account_roles (role_name);

-- Built-in roles hold patterns: every ops permission, and every ops read permission.
insert into roles (name, permissions, builtin, description) values
  ('platform_admin', '{ops.*}', true, 'Every ops permission'),
  ('ops_viewer', '{ops.*.read}', true, 'Every ops read permission');

create function notify_permissions_changed() returns trigger language plpgsql as $$
begin
  perform pg_notify('backplane_permissions', '');
  return null;
end $$;

create trigger roles_changed after insert or update or delete or truncate on roles
  for each statement execute function notify_permissions_changed();
create trigger account_roles_changed after insert or update or delete or truncate on account_roles
  for each statement execute function notify_permissions_changed();
