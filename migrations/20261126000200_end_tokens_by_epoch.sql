-- Ends of access ordered by the database, not by clocks (ADR 0064, amended 2026-11-26): every
-- account has a token epoch that a lock raises; each access token and each session carries the
-- epoch it was issued under. A token or refresh token whose epoch is below the account's is ended,
-- and an unlock never lowers the epoch, so it never revives them. Tokens issued before this
-- release carry no epoch and count as epoch 0.
alter table accounts add column token_epoch bigint not null default 0;
alter table sessions add column token_epoch bigint not null default 0;
-- For an account: tokens with an epoch below this one are ended; null ends every token (deleted).
alter table auth_access_revocations add column token_epoch bigint;

-- Accounts locked in the last day (their rows are live): raise the epoch, so their earlier tokens
-- and sessions end for good, also those issued after an unlock before this release.
update accounts set token_epoch = 1
where id in (select account_id from auth_access_revocations where account_id is not null);
update auth_access_revocations r set token_epoch = 1
where r.account_id is not null and exists (select 1 from accounts a where a.id = r.account_id);

create function accounts_locked_raise_epoch() returns trigger language plpgsql as $$
begin
  new.token_epoch := old.token_epoch + 1;
  return new;
end $$;

create trigger accounts_locked_raise_epoch before update of locked_at on accounts
  for each row when (new.locked_at is not null and old.locked_at is distinct from new.locked_at)
  execute function accounts_locked_raise_epoch();

drop trigger sessions_revoked on sessions;
drop trigger accounts_deleted on accounts;
drop trigger accounts_locked on accounts;
drop function sessions_revoked();
drop function accounts_access_ended();
drop function record_access_revocation(uuid, uuid, interval);

-- Lifetimes as before: a session's access tokens live 15 minutes, `token issue` tokens at most 24
-- hours; a minute more covers an issuer's clock that runs ahead (exp comes from it).
create function record_access_revocation(p_session_id uuid, p_account_id uuid, p_lifetime interval, p_token_epoch bigint) returns void
language plpgsql as $$
declare
  revocation auth_access_revocations;
begin
  insert into auth_access_revocations (session_id, account_id, expires_at, token_epoch)
  values (p_session_id, p_account_id, now() + p_lifetime + interval '1 minute', p_token_epoch)
  returning * into revocation;
  perform pg_notify('backplane_access_revocations', json_build_object(
    'session_id', revocation.session_id,
    'account_id', revocation.account_id,
    'revoked_at_ms', floor(extract(epoch from revocation.revoked_at) * 1000),
    'expires_at_ms', floor(extract(epoch from revocation.expires_at) * 1000),
    'token_epoch', revocation.token_epoch
  )::text);
  -- Rows nobody can need any more go a few at a time; rows another transaction holds are left.
  delete from auth_access_revocations where id in (
    select id from auth_access_revocations where expires_at < now() - interval '1 hour'
    order by expires_at limit 100 for update skip locked
  );
end $$;

create function sessions_revoked() returns trigger language plpgsql as $$
begin
  perform record_access_revocation(new.id, null, interval '15 minutes', null);
  return null;
end $$;

create trigger sessions_revoked after update of revoked_at on sessions
  for each row when (old.revoked_at is null and new.revoked_at is not null)
  execute function sessions_revoked();

create function accounts_deleted() returns trigger language plpgsql as $$
begin
  perform record_access_revocation(null, old.id, interval '24 hours', null);
  return null;
end $$;

create function accounts_locked() returns trigger language plpgsql as $$
begin
  perform record_access_revocation(null, new.id, interval '24 hours', new.token_epoch);
  return null;
end $$;

create trigger accounts_deleted after delete on accounts
  for each row execute function accounts_deleted();
create trigger accounts_locked after update of locked_at on accounts
  for each row when (new.locked_at is not null and old.locked_at is distinct from new.locked_at)
  execute function accounts_locked();
