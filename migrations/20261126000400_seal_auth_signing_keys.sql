-- The signing key's private half is sealed with APP_ENCRYPTION_KEY by the application, which SQL
-- cannot use: each start seals any row still in clear and nulls private_jwk (ADR 0068). A rotation
-- retires the active key, which keeps verifying until verifies_until, and drops its private half.
alter table auth_signing_keys
  alter column private_jwk drop not null,
  add column sealed_private_jwk text,
  add column verifies_until timestamptz,
  add constraint auth_signing_keys_active_can_sign
    check (retired_at is not null or private_jwk is not null or sealed_private_jwk is not null);

-- A rotation, a sealing or a deletion reaches every instance at once; they also poll every minute.
-- Per row: a statement that changes nothing (the deletion of expired keys at each start) stays quiet.
create function notify_signing_keys_changed() returns trigger language plpgsql as $$
begin
  perform pg_notify('backplane_signing_keys', '');
  return null;
end $$;

create trigger auth_signing_keys_changed after insert or update or delete on auth_signing_keys
  for each row execute function notify_signing_keys_changed();
