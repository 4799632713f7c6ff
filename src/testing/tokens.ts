import { randomBytes } from 'node:crypto';
import { type SigningKey, createAccount, createRole, grantRoleToAccount, issueAccessToken, loadSigningKey } from '../modules/auth/index.ts';
import type { Queryable } from '../platform/db/pool.ts';
import { createSecretBox, parseEncryptionKeys } from '../platform/secrets/secretBox.ts';
import { currentApplication } from '../app/application.ts';
import { TEST_ENCRYPTION_KEY } from './instance.ts';

/** The box test instances seal with (TEST_ENCRYPTION_KEY). */
export const testBox = createSecretBox(parseEncryptionKeys(TEST_ENCRYPTION_KEY)!);

/** The stored key that signs, as a test instance opens it (generated and sealed when none is stored yet). */
export const testSigningKey = (db: Queryable): Promise<SigningKey> => loadSigningKey(db, undefined, testBox);

/** An account accountWithToken made, with a bearer token for it. */
export interface TestAccount {
  /** The account's id. */
  id: string;
  /** Its email, unique per call. */
  email: string;
  /** A signed access token of the account. */
  token: string;
}

/**
 * An account holding the given roles (created as custom roles from `permissions` when given),
 * with a token as `token issue` makes it.
 */
export async function accountWithToken(
  db: Queryable,
  options: { roles?: string[]; permissions?: string[]; methods?: string[]; ttlSeconds?: number } = {},
): Promise<TestAccount> {
  // Roles may name only the permissions of a composed application.
  await currentApplication();
  const email = `user-${randomBytes(4).toString('hex')}@example.com`;
  const account = await createAccount(db, email, undefined);
  const roles = [...(options.roles ?? [])];
  if (options.permissions) {
    const role = `custom_${randomBytes(4).toString('hex')}`;
    await createRole(db, role, options.permissions);
    roles.push(role);
  }
  for (const role of roles) {
    await grantRoleToAccount(db, email, role);
  }
  const key = await testSigningKey(db);
  const { token } = await issueAccessToken(key, { accountId: account.id, email, methods: options.methods ?? ['cli'] }, options.ttlSeconds ?? 900);
  return { id: account.id, email, token };
}

/** The Authorization header of a bearer token, for fetch. */
export const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
