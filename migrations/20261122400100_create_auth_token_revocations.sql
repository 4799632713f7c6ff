-- Providers' refresh tokens waiting to be revoked (RFC 7009) by the job auth_revoke_tokens.
-- Rows are queued in the transaction that unlinks an identity or deletes an account; the token
-- stays sealed under its identity's context, kept here as provider and subject.
create table auth_token_revocations (
  id bigint generated always as identity primary key,
  provider text not null,
  subject text not null,
  token_sealed text not null,
  attempts integer not null default 0 check (attempts >= 0),
  next_attempt_at timestamptz not null default now(),
  -- Set while a run holds the row; another run may claim it once the lease has passed.
  lease_expires_at timestamptz,
  claim_id uuid,
  last_error text check (length(last_error) <= 500),
  created_at timestamptz not null default now(),
  constraint auth_token_revocations_claim_has_lease check ((claim_id is null) = (lease_expires_at is null))
);
create index auth_token_revocations_next_attempt_at_idx on auth_token_revocations (next_attempt_at, id);

-- Outcomes of revocation attempts per hour, so every instance reports the same recent counts.
create table auth_token_revocation_outcomes (
  hour timestamptz not null,
  outcome text not null check (outcome in ('revoked', 'retrying', 'abandoned')),
  count bigint not null default 0,
  primary key (hour, outcome)
);
