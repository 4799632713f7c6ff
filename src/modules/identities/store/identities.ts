import type { Queryable } from '../../../platform/db/pool.ts';
import { PG, pgCode } from '../../../platform/db/pgErrors.ts';
import { IdentityError } from '../errors.ts';

/** An account's link to a provider's subject. */
export interface Identity {
  id: string;
  accountId: string;
  provider: string;
  subject: string;
  refreshTokenSealed: string | null;
}

interface IdentityRow {
  id: string;
  account_id: string;
  provider: string;
  subject: string;
  refresh_token_sealed: string | null;
}

const toIdentity = (row: IdentityRow): Identity => ({
  id: row.id,
  accountId: row.account_id,
  provider: row.provider,
  subject: row.subject,
  refreshTokenSealed: row.refresh_token_sealed,
});

const COLUMNS = 'id::text, account_id::text, provider, subject, refresh_token_sealed';

const selectBySubjectSql = `
select ${COLUMNS} from identities where provider = $1 and subject = $2 for update`;

/** Locked for the caller's transaction: a concurrent callback for the same subject waits. */
export async function findIdentityForUpdate(db: Queryable, provider: string, subject: string): Promise<Identity | undefined> {
  const row = (await db.query<IdentityRow>(selectBySubjectSql, [provider, subject])).rows[0];
  return row ? toIdentity(row) : undefined;
}

const lockAccountIdentitiesSql = `
select ${COLUMNS} from identities where account_id = $1 order by provider for update`;

/**
 * Every identity of an account, locked: two unlinks of one account run one after the other, so
 * both cannot pass the last-sign-in-method check.
 */
export async function lockAccountIdentities(db: Queryable, accountId: string): Promise<Identity[]> {
  return (await db.query<IdentityRow>(lockAccountIdentitiesSql, [accountId])).rows.map(toIdentity);
}

const insertIdentitySql = `
insert into identities (account_id, provider, subject, email, refresh_token_sealed)
values ($1, $2, $3, $4, $5)
returning ${COLUMNS}`;

export async function insertIdentity(
  db: Queryable,
  identity: { accountId: string; provider: string; subject: string; email: string | null; refreshTokenSealed: string | null },
): Promise<Identity> {
  try {
    const result = await db.query<IdentityRow>(insertIdentitySql, [
      identity.accountId,
      identity.provider,
      identity.subject,
      identity.email,
      identity.refreshTokenSealed,
    ]);
    return toIdentity(result.rows[0]!);
  } catch (error) {
    if (pgCode(error) === PG.uniqueViolation && String((error as { constraint?: string }).constraint) === 'identities_account_provider_key') {
      throw new IdentityError('provider_already_linked', `The account is already linked to another ${identity.provider} identity.`, { cause: error });
    }
    if (pgCode(error) === PG.uniqueViolation) {
      throw new IdentityError('identity_in_use', `This ${identity.provider} identity is linked to another account.`, { cause: error });
    }
    throw error;
  }
}

const recordSignInSql = `
update identities set last_sign_in_at = now(), email = coalesce($2, email), refresh_token_sealed = coalesce($3, refresh_token_sealed)
where id = $1`;

/** Records a sign-in; a new refresh token replaces the stored one (the caller queues the old one for revocation). */
export async function recordIdentitySignIn(db: Queryable, id: string, email: string | null, refreshTokenSealed: string | null): Promise<void> {
  await db.query(recordSignInSql, [id, email, refreshTokenSealed]);
}

const deleteIdentitySql = `delete from identities where id = $1`;

export async function deleteIdentity(db: Queryable, id: string): Promise<void> {
  await db.query(deleteIdentitySql, [id]);
}

const countIdentitiesSql = `
select count(*)::int as count from identities where account_id = $1 and provider <> $2`;

/** Identities of an account other than the given provider's, for the last-sign-in-method rule. */
export async function countOtherIdentities(db: Queryable, accountId: string, exceptProvider: string): Promise<number> {
  return (await db.query<{ count: number }>(countIdentitiesSql, [accountId, exceptProvider])).rows[0]!.count;
}

const lockSubjectSql = `select pg_advisory_xact_lock(hashtextextended('identity:' || $1 || ':' || $2, 0))`;

/** Serialises callbacks for one provider subject, so a new subject gets one account, not two. */
export async function lockSubject(db: Queryable, provider: string, subject: string): Promise<void> {
  await db.query(lockSubjectSql, [provider, subject]);
}
