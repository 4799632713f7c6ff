-- The EdDSA key that signs access tokens when APP_JWT_PRIVATE_KEY is unset: generated once by
-- whichever instance starts first and shared by all of them.
create table auth_signing_keys (
  kid text primary key,
  algorithm text not null default 'EdDSA',
  private_jwk jsonb not null,
  public_jwk jsonb not null,
  created_at timestamptz not null default now(),
  retired_at timestamptz
);
create unique index auth_signing_keys_one_active on auth_signing_keys ((retired_at is null)) where retired_at is null;
