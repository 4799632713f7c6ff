import { randomBytes } from 'node:crypto';
import { createAccount } from '../../src/modules/auth/service.ts';
import type { Queryable } from '../../src/platform/db/pool.ts';
import { sendJson } from './http.ts';

export const PASSWORD = 'correct horse battery staple';

/** An account that signs in with PASSWORD. */
export async function accountWithPassword(db: Queryable): Promise<{ id: string; email: string }> {
  const account = await createAccount(db, `person-${randomBytes(4).toString('hex')}@example.com`, PASSWORD);
  return { id: account.id, email: account.email };
}

export const signIn = (url: string, email: string, password = PASSWORD) => sendJson('POST', `${url}/auth/sign-in`, { email, password });

/** Raises the per-address budget, so a test file's many requests from 127.0.0.1 reach the route. */
export const raiseAddressLimit = (url: string, adminToken: string) =>
  sendJson('PUT', `${url}/ops/settings/auth.ip_requests_per_minute`, { value: 10_000, reason: 'tests from one address' }, { Authorization: `Bearer ${adminToken}` });
