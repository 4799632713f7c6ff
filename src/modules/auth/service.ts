import type { Queryable } from '../../platform/db/pool.ts';
import { type IssuedToken, issueAccessToken } from './accessTokens.ts';
import { AuthError } from './errors.ts';
import { hashPassword } from './passwords.ts';
import { isKnownPermission } from './permissions.ts';
import type { SigningKey } from './signingKeys.ts';
import { type Account, findAccountByEmail, insertAccount, setAccountLocked } from './store/accounts.ts';
import { parseEmail } from './email.ts';
import { type Role, findRole, grantRole, insertRole } from './store/roles.ts';

const ROLE_NAME = /^[a-z][a-z0-9_]{1,62}$/;

/** Stores the address as typed beside its normalised key (ADR 0063); refused 422 invalid_email when it has none. */
export async function createAccount(db: Queryable, email: string, password: string | undefined): Promise<Account> {
  const parsed = parseEmail(email);
  return insertAccount(db, parsed, password ? await hashPassword(password) : null);
}

/** `accounts lock|unlock`: a locked account's tokens stop working on every instance (ADR 0064). */
export async function setAccountLockedByEmail(db: Queryable, email: string, locked: boolean): Promise<Account> {
  const account = await findAccountByEmail(db, email);
  if (!account || !(await setAccountLocked(db, account.id, locked))) {
    throw new AuthError('account_not_found', `There is no account ${email}.`);
  }
  return account;
}

export function checkPermissions(permissions: string[]): void {
  const unknown = permissions.filter((permission) => !isKnownPermission(permission));
  if (unknown.length > 0) {
    throw new AuthError('unknown_permission', `Unknown permissions: ${unknown.join(', ')}.`);
  }
}

export function checkRoleName(name: string): void {
  if (!ROLE_NAME.test(name)) {
    throw new AuthError('invalid_role_name', 'Role names are 2–63 lowercase letters, digits or underscores.');
  }
}

/** A role's permissions as stored: known ones only, each once, sorted. */
export function normalizePermissions(permissions: string[]): string[] {
  checkPermissions(permissions);
  return [...new Set(permissions)].sort();
}

export async function createRole(db: Queryable, name: string, permissions: string[]): Promise<Role> {
  checkRoleName(name);
  return insertRole(db, name, normalizePermissions(permissions));
}

export async function grantRoleToAccount(db: Queryable, email: string, roleName: string): Promise<Account> {
  const account = await findAccountByEmail(db, email);
  if (!account) {
    throw new AuthError('account_not_found', `There is no account ${email}.`);
  }
  if (!(await findRole(db, roleName))) {
    throw new AuthError('role_not_found', `There is no role ${roleName}.`);
  }
  await grantRole(db, account.id, roleName);
  return account;
}

/** A break-glass token for an operator or a script; counts as a second factor (method `cli`). */
export async function issueCliToken(db: Queryable, key: SigningKey, email: string, ttlSeconds: number): Promise<{ account: Account; issued: IssuedToken }> {
  const account = await findAccountByEmail(db, email);
  if (!account) {
    throw new AuthError('account_not_found', `There is no account ${email}.`);
  }
  if (account.lockedAt) {
    throw new AuthError('account_locked', `The account ${account.email} is locked.`);
  }
  const issued = await issueAccessToken(key, { accountId: account.id, email: account.email, methods: ['cli'], tokenEpoch: account.tokenEpoch }, ttlSeconds);
  return { account, issued };
}
