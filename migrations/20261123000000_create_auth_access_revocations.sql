-- Ends of access that access tokens cannot see (ADR 0064): a revoked session, a deleted or locked
-- account. Every instance keeps the rows in memory (loaded at start, then one NOTIFY per row), so
-- the bearer check refuses such tokens with no query. A row matters only while a token issued
-- before it could still be valid: expires_at bounds the memory and the table.
-- An operator's lock (`backplane accounts lock`): no sign-in, refresh or bearer request while set.
alter table accounts add column locked_at timestamptz;

create table auth_access_revocations (
  id bigint generated always as identity primary key,
  session_id uuid,
  account_id uuid,
  revoked_at timestamptz not null default now(),
  expires_at timestamptz not null,
  constraint auth_access_revocations_one_subject check ((session_id is null) <> (account_id is null))
);
create index auth_access_revocations_expires_at_idx on auth_access_revocations (expires_at);

-- Lifetimes: a session's access tokens live 15 minutes (ACCESS_TOKEN_TTL_SECONDS), `token issue`
-- tokens at most 24 hours (MAX_TTL_SECONDS); a minute more covers clocks that disagree.
create function record_access_revocation(p_session_id uuid, p_account_id uuid, p_lifetime interval) returns void
language plpgsql as $$
declare
  revocation auth_access_revocations;
begin
  insert into auth_access_revocations (session_id, account_id, expires_at)
  values (p_session_id, p_account_id, now() + p_lifetime + interval '1 minute')
  returning * into revocation;
  perform pg_notify('backplane_access_revocations', json_build_object(
    'session_id', revocation.session_id,
    'account_id', revocation.account_id,
    'revoked_at_ms', floor(extract(epoch from revocation.revoked_at) * 1000),
    'expires_at_ms', floor(extract(epoch from revocation.expires_at) * 1000)
  )::text);
  -- Rows nobody can need any more go a few at a time; rows another transaction holds are left.
  delete from auth_access_revocations where id in (
    select id from auth_access_revocations where expires_at < now() - interval '1 hour'
    order by expires_at limit 100 for update skip locked
  );
end $$;

create function sessions_revoked() returns trigger language plpgsql as $$
begin
  perform record_access_revocation(new.id, null, interval '15 minutes');
  return null;
end $$;

create trigger sessions_revoked after update of revoked_at on sessions
  for each row when (old.revoked_at is null and new.revoked_at is not null)
  execute function sessions_revoked();

create function accounts_access_ended() returns trigger language plpgsql as $$
begin
  perform record_access_revocation(null, old.id, interval '24 hours');
  return null;
end $$;

create trigger accounts_deleted after delete on accounts
  for each row execute function accounts_access_ended();
create trigger accounts_locked after update of locked_at on accounts
  for each row when (new.locked_at is not null and old.locked_at is distinct from new.locked_at)
  execute function accounts_access_ended();
