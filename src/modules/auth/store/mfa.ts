import type { Queryable } from '../../../platform/db/pool.ts';
import { PG, pgCode } from '../../../platform/db/pgErrors.ts';
import { accountEnded } from '../errors.ts';

/** A row for an account deleted since its token was checked: 401, never a foreign-key 500 (ADR 0064). */
async function forLiveAccount<T>(write: Promise<T>): Promise<T> {
  try {
    return await write;
  } catch (error) {
    throw pgCode(error) === PG.foreignKeyViolation ? accountEnded(error) : error;
  }
}

export interface TotpRow {
  sealed_secret: string;
  confirmed: boolean;
}

const selectTotpSql = `select sealed_secret, confirmed_at is not null as confirmed from mfa_totp where account_id = $1`;

export async function findTotp(db: Queryable, accountId: string): Promise<TotpRow | undefined> {
  const result = await db.query<TotpRow>(selectTotpSql, [accountId]);
  return result.rows[0];
}

// A pending (unconfirmed) setup is replaced; a confirmed one is never overwritten here.
const upsertPendingTotpSql = `
insert into mfa_totp (account_id, sealed_secret) values ($1, $2)
on conflict (account_id) do update set sealed_secret = excluded.sealed_secret, created_at = now(), last_used_step = null
where mfa_totp.confirmed_at is null
returning account_id`;

export async function upsertPendingTotp(db: Queryable, accountId: string, sealedSecret: string): Promise<boolean> {
  const result = await forLiveAccount(db.query(upsertPendingTotpSql, [accountId, sealedSecret]));
  return (result.rowCount ?? 0) > 0;
}

// Conditional on the step, so one code is accepted once even when two instances race.
const useTotpStepSql = `
update mfa_totp set last_used_step = $2
where account_id = $1 and (last_used_step is null or last_used_step < $2)
returning account_id`;

export async function useTotpStep(tx: Queryable, accountId: string, step: number): Promise<boolean> {
  const result = await tx.query(useTotpStepSql, [accountId, step]);
  return (result.rowCount ?? 0) > 0;
}

const confirmTotpSql = `update mfa_totp set confirmed_at = now() where account_id = $1 and confirmed_at is null returning account_id`;

export async function confirmTotp(tx: Queryable, accountId: string): Promise<boolean> {
  const result = await tx.query(confirmTotpSql, [accountId]);
  return (result.rowCount ?? 0) > 0;
}

const deleteTotpSql = `delete from mfa_totp where account_id = $1`;
const deleteRecoveryCodesSql = `delete from mfa_recovery_codes where account_id = $1`;

export async function deleteSecondFactor(tx: Queryable, accountId: string): Promise<void> {
  await tx.query(deleteTotpSql, [accountId]);
  await tx.query(deleteRecoveryCodesSql, [accountId]);
}

const insertRecoveryCodesSql = `
insert into mfa_recovery_codes (account_id, code_hash) select $1, unnest($2::bytea[])`;

export async function replaceRecoveryCodes(tx: Queryable, accountId: string, codeHashes: Buffer[]): Promise<void> {
  await tx.query(deleteRecoveryCodesSql, [accountId]);
  await forLiveAccount(tx.query(insertRecoveryCodesSql, [accountId, codeHashes]));
}

const useRecoveryCodeSql = `
update mfa_recovery_codes set used_at = now()
where account_id = $1 and code_hash = $2 and used_at is null
returning account_id`;

export async function useRecoveryCode(tx: Queryable, accountId: string, codeHash: Buffer): Promise<boolean> {
  const result = await tx.query(useRecoveryCodeSql, [accountId, codeHash]);
  return (result.rowCount ?? 0) > 0;
}

const insertChallengeSql = `
insert into mfa_challenges (account_id, token_hash, expires_at) values ($1, $2, now() + make_interval(secs => $3))`;

export async function insertChallenge(db: Queryable, accountId: string, tokenHash: Buffer, ttlSeconds: number): Promise<void> {
  await forLiveAccount(db.query(insertChallengeSql, [accountId, tokenHash, ttlSeconds]));
}

export interface ChallengeRow {
  id: string;
  account_id: string;
  email: string;
  email_normalized: string;
}

// Open: unused, unexpired by the database's clock, and with attempts left.
const findOpenChallengeSql = `
select c.id, c.account_id, a.email, coalesce(a.email_normalized, a.id::text) as email_normalized
from mfa_challenges c join accounts a on a.id = c.account_id
where c.token_hash = $1 and c.used_at is null and c.expires_at > now() and c.attempts < $2`;

export async function findOpenChallenge(db: Queryable, tokenHash: Buffer, maxAttempts: number): Promise<ChallengeRow | undefined> {
  const result = await db.query<ChallengeRow>(findOpenChallengeSql, [tokenHash, maxAttempts]);
  return result.rows[0];
}

// Claimed before the code is checked, under the row's lock: concurrent attempts anywhere get at most maxAttempts claims.
const claimChallengeAttemptSql = `
update mfa_challenges set attempts = attempts + 1
where id = $1 and used_at is null and expires_at > now() and attempts < $2
returning id`;

export async function claimChallengeAttempt(db: Queryable, id: string, maxAttempts: number): Promise<boolean> {
  const result = await db.query(claimChallengeAttemptSql, [id, maxAttempts]);
  return (result.rowCount ?? 0) > 0;
}

const useChallengeSql = `
update mfa_challenges set used_at = now() where id = $1 and used_at is null and expires_at > now() returning id`;

export async function useChallenge(tx: Queryable, id: string): Promise<boolean> {
  const result = await tx.query(useChallengeSql, [id]);
  return (result.rowCount ?? 0) > 0;
}
