-- Sign-in sessions (refresh tokens, stored only as SHA-256 hashes, rotated within a family) and
-- the second factor: TOTP seeds sealed under APP_ENCRYPTION_KEY, hashed single-use recovery
-- codes, and single-use challenges between the password and the second factor.
create table sessions (
  id uuid primary key default gen_random_uuid(),
  account_id uuid not null references accounts (id) on delete cascade,
  token_hash bytea not null unique,
  family_id uuid not null,
  methods text[] not null,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  rotated_at timestamptz,
  revoked_at timestamptz,
  user_agent text not null default '',
  client_ip inet
);
create index sessions_family_id_idx on sessions (family_id);
create index sessions_account_id_idx on sessions (account_id);

create table mfa_totp (
  account_id uuid primary key references accounts (id) on delete cascade,
  sealed_secret text not null,
  confirmed_at timestamptz,
  -- The last 30-second step whose code was accepted: a code is never accepted twice.
  last_used_step bigint,
  created_at timestamptz not null default now()
);

create table mfa_recovery_codes (
  account_id uuid not null references accounts (id) on delete cascade,
  code_hash bytea not null,
  used_at timestamptz,
  created_at timestamptz not null default now(),
  primary key (account_id, code_hash)
);

create table mfa_challenges (
  id uuid primary key default gen_random_uuid(),
  account_id uuid not null references accounts (id) on delete cascade,
  token_hash bytea not null unique,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  used_at timestamptz
);
create index mfa_challenges_account_id_idx on mfa_challenges (account_id);
