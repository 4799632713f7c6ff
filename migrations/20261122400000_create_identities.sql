-- Accounts' links to OpenID Connect providers, and the sign-in flows in progress with them.
-- A provider's refresh token is sealed (AES-256-GCM, context identity:<provider>:<subject>).
create table identities (
  id uuid primary key default gen_random_uuid(),
  account_id uuid not null references accounts (id) on delete cascade,
  provider text not null check (provider ~ '^[a-z][a-z0-9_-]{0,31}$'),
  subject text not null check (length(subject) between 1 and 255),
  email text check (length(email) <= 320),
  refresh_token_sealed text,
  created_at timestamptz not null default now(),
  last_sign_in_at timestamptz not null default now(),
  constraint identities_provider_subject_key unique (provider, subject),
  constraint identities_account_provider_key unique (account_id, provider)
);

-- One row per started flow: single use (deleted when the callback consumes it), 10 minutes.
create table identity_flows (
  state text primary key check (length(state) between 16 and 128),
  provider text not null,
  code_verifier text not null,
  nonce text not null,
  link_account_id uuid references accounts (id) on delete cascade,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null
);
create index identity_flows_expires_at_idx on identity_flows (expires_at);
