import type { JWK } from 'jose';
import type { Queryable } from '../../../platform/db/pool.ts';

export interface StoredSigningKey {
  kid: string;
  privateJwk: JWK;
  publicJwk: JWK;
}

const selectActiveKeySql = `
select kid, private_jwk, public_jwk from auth_signing_keys where retired_at is null`;

export async function selectActiveSigningKey(db: Queryable): Promise<StoredSigningKey | undefined> {
  const result = await db.query<{ kid: string; private_jwk: JWK; public_jwk: JWK }>(selectActiveKeySql);
  const row = result.rows[0];
  return row ? { kid: row.kid, privateJwk: row.private_jwk, publicJwk: row.public_jwk } : undefined;
}

// The partial unique index lets only the first of several starting instances insert its key.
const insertSigningKeySql = `
insert into auth_signing_keys (kid, private_jwk, public_jwk) values ($1, $2, $3)
on conflict do nothing`;

export async function insertSigningKey(db: Queryable, key: StoredSigningKey): Promise<void> {
  await db.query(insertSigningKeySql, [key.kid, key.privateJwk, key.publicJwk]);
}
