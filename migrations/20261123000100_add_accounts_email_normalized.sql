-- One reading of an email address (ADR 0063): accounts are found, rate-limited and kept unique by
-- email_normalized, the key the code's normalizeEmail() computes; email keeps the address as typed.
alter table accounts add column email_normalized text;

-- The same steps as normalizeEmail() for the addresses the old rule accepted (no whitespace
-- inside): NFKC, trim, one trailing dot of the domain, ASCII lower-casing ("C" touches A-Z only).
update accounts set email_normalized = lower(
  regexp_replace(
    btrim(case when current_setting('server_encoding') = 'UTF8' then normalize(email, NFKC) else email end),
    '\.$', ''
  ) collate "C"
);

-- Two accounts whose addresses now read the same: the oldest keeps the address, the later ones
-- are locked and lose it (email_normalized null), so neither sign-in budget nor account is shared;
-- the lock ends their tokens too (the accounts_locked trigger of the migration before).
do $$
declare
  loser record;
begin
  for loser in
    select id, email from (
      select id, email, row_number() over (partition by email_normalized order by created_at, id) as rank
      from accounts
    ) ranked
    where rank > 1
  loop
    raise warning 'account % (%) collides with an older account after email normalisation: locked, its address cleared (ADR 0063)', loser.id, loser.email;
    update accounts set email_normalized = null, locked_at = now() where id = loser.id;
  end loop;
end $$;

drop index accounts_email_key;
create unique index accounts_email_normalized_key on accounts (email_normalized);
alter table accounts add constraint accounts_email_normalized_or_locked check (email_normalized is not null or locked_at is not null);
