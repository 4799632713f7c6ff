import type { JWK } from 'jose';
import type { Queryable } from '../../../platform/db/pool.ts';

/** A key row as this release writes it: the private half sealed with APP_ENCRYPTION_KEY. */
export interface StoredSigningKey {
  kid: string;
  sealedPrivateJwk: string;
  publicJwk: JWK;
}

/** A key that verifies now; secondsLeft is null for the signing key, else counted on the database clock. */
export interface VerifyingKeyRow {
  kid: string;
  publicJwk: JWK;
  signing: boolean;
  sealedPrivateJwk: string | null;
  secondsLeft: number | null;
}

const selectActiveKeySql = `
select kid, sealed_private_jwk, public_jwk from auth_signing_keys where retired_at is null and sealed_private_jwk is not null`;

export async function selectActiveSigningKey(db: Queryable): Promise<StoredSigningKey | undefined> {
  const result = await db.query<{ kid: string; sealed_private_jwk: string; public_jwk: JWK }>(selectActiveKeySql);
  const row = result.rows[0];
  return row ? { kid: row.kid, sealedPrivateJwk: row.sealed_private_jwk, publicJwk: row.public_jwk } : undefined;
}

// The partial unique index lets only the first of several starting instances insert its key.
const insertSigningKeySql = `
insert into auth_signing_keys (kid, sealed_private_jwk, public_jwk) values ($1, $2, $3)
on conflict do nothing`;

export async function insertSigningKey(db: Queryable, key: StoredSigningKey): Promise<void> {
  await db.query(insertSigningKeySql, [key.kid, key.sealedPrivateJwk, key.publicJwk]);
}

// Rows the previous release wrote: their private half is still in clear.
const selectClearKeysSql = `
select kid, private_jwk from auth_signing_keys where private_jwk is not null`;

export async function selectClearSigningKeys(db: Queryable): Promise<Array<{ kid: string; privateJwk: JWK }>> {
  const result = await db.query<{ kid: string; private_jwk: JWK }>(selectClearKeysSql);
  return result.rows.map((row) => ({ kid: row.kid, privateJwk: row.private_jwk }));
}

// Only while still clear: two instances sealing the same row at once leave one consistent value.
const sealKeySql = `
update auth_signing_keys set sealed_private_jwk = $2, private_jwk = null where kid = $1 and private_jwk is not null`;

export async function sealSigningKey(db: Queryable, kid: string, sealedPrivateJwk: string): Promise<void> {
  await db.query(sealKeySql, [kid, sealedPrivateJwk]);
}

// The signing key and every retired key still in its overlap, with the time left on the database clock.
const selectVerifyingKeysSql = `
select kid, public_jwk, retired_at is null as signing,
       case when retired_at is null then sealed_private_jwk end as sealed_private_jwk,
       case when retired_at is null then null else extract(epoch from verifies_until - now())::float8 end as seconds_left
from auth_signing_keys
where retired_at is null or verifies_until > now()`;

export async function selectVerifyingKeys(db: Queryable): Promise<VerifyingKeyRow[]> {
  const result = await db.query<{ kid: string; public_jwk: JWK; signing: boolean; sealed_private_jwk: string | null; seconds_left: number | null }>(
    selectVerifyingKeysSql,
  );
  return result.rows.map((row) => ({
    kid: row.kid,
    publicJwk: row.public_jwk,
    signing: row.signing,
    sealedPrivateJwk: row.sealed_private_jwk,
    secondsLeft: row.seconds_left,
  }));
}

// One rotation at a time: a second waits and then retires the key the first one made.
const lockRotationSql = `
select pg_advisory_xact_lock(hashtext('auth_signing_keys'))`;

export async function lockSigningKeys(tx: Queryable): Promise<void> {
  await tx.query(lockRotationSql);
}

// A retired key only verifies: its private half goes at once.
const retireActiveKeySql = `
update auth_signing_keys
set retired_at = now(), verifies_until = now() + make_interval(secs => $1), private_jwk = null, sealed_private_jwk = null
where retired_at is null
returning kid, verifies_until`;

export async function retireActiveSigningKey(tx: Queryable, overlapSeconds: number): Promise<{ kid: string; verifiesUntil: Date } | undefined> {
  const result = await tx.query<{ kid: string; verifies_until: Date }>(retireActiveKeySql, [overlapSeconds]);
  const row = result.rows[0];
  return row ? { kid: row.kid, verifiesUntil: row.verifies_until } : undefined;
}

// Keys whose overlap has passed verify nothing any more.
const deleteExpiredKeysSql = `
delete from auth_signing_keys where retired_at is not null and (verifies_until is null or verifies_until <= now())
returning kid`;

export async function deleteExpiredSigningKeys(db: Queryable): Promise<string[]> {
  const result = await db.query<{ kid: string }>(deleteExpiredKeysSql);
  return result.rows.map((row) => row.kid);
}

export interface SigningKeyListing {
  kid: string;
  createdAt: Date;
  retiredAt: Date | null;
  verifiesUntil: Date | null;
}

// `keys list`: newest first; the table holds a handful of rows.
const listKeysSql = `
select kid, created_at, retired_at, verifies_until from auth_signing_keys order by created_at desc, kid`;

export async function listSigningKeys(db: Queryable): Promise<SigningKeyListing[]> {
  const result = await db.query<{ kid: string; created_at: Date; retired_at: Date | null; verifies_until: Date | null }>(listKeysSql);
  return result.rows.map((row) => ({ kid: row.kid, createdAt: row.created_at, retiredAt: row.retired_at, verifiesUntil: row.verifies_until }));
}
