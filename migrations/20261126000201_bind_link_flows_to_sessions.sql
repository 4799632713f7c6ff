-- A link flow belongs to the sign-in that started it (ADR 0040, amended 2026-11-26): its session
-- (none for a `token issue` token) and the account's token epoch at the start. Once either has
-- ended, the callback links nothing. Link flows in progress have neither and are removed: their
-- owners start again (a flow lives 10 minutes).
delete from identity_flows where link_account_id is not null;
alter table identity_flows add column link_session_id uuid references sessions (id) on delete cascade;
alter table identity_flows add column link_token_epoch bigint;
alter table identity_flows add constraint identity_flows_link_epoch
  check (link_account_id is null or link_token_epoch is not null);
