-- Second-factor attempts spent on a sign-in challenge: at most 5 are evaluated, then the challenge
-- is dead and the user signs in again (ADR 0065). Claimed by a conditional update before a code is
-- checked, so concurrent attempts on several instances never evaluate more than 5. A constant
-- default adds the column without rewriting the table.
alter table mfa_challenges add column attempts int not null default 0;
