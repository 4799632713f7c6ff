import { randomBytes } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import { createAccount } from '../../src/modules/auth/service.ts';
import type { Queryable } from '../../src/platform/db/pool.ts';
import { sendJson } from './http.ts';
import { bearer } from './tokens.ts';

export const PASSWORD = 'correct horse battery staple';

/** An account that signs in with PASSWORD. */
export async function accountWithPassword(db: Queryable): Promise<{ id: string; email: string }> {
  const account = await createAccount(db, `person-${randomBytes(4).toString('hex')}@example.com`, PASSWORD);
  return { id: account.id, email: account.email };
}

export const signIn = (url: string, email: string, password = PASSWORD) => sendJson('POST', `${url}/auth/sign-in`, { email, password });

/** Raises the per-address budget, so a test file's many requests from 127.0.0.1 reach the route. */
export const raiseAddressLimit = (url: string, adminToken: string) =>
  sendJson(
    'PUT',
    `${url}/ops/settings/auth.ip_requests_per_minute`,
    { value: 10_000, reason: 'tests from one address' },
    { Authorization: `Bearer ${adminToken}` },
  );

/** The code an authenticator app shows, `steps` 30-second steps from now. */
export const codeAt = (secret: string, steps = 0) =>
  new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate({ timestamp: Date.now() + steps * 30_000 });

/** A six-digit code the authenticator shows in none of the steps a server might accept now. */
export const wrongCodeFor = (secret: string) =>
  ['000000', '111111', '222222', '333333'].find((code) => ![-2, -1, 0, 1, 2].some((steps) => codeAt(secret, steps) === code))!;

/** An account with TOTP on (its sign-ins answer 202): its secret, recovery codes and a password-only access token. */
export async function accountWithTotp(db: Queryable, url: string) {
  const account = await accountWithPassword(db);
  const post = async (path: string, token: string, body: unknown = {}) => (await sendJson('POST', `${url}${path}`, body, bearer(token))).json();
  const { access_token: token } = (await (await signIn(url, account.email)).json()) as { access_token: string };
  const started = (await post('/auth/mfa/totp', token)) as { secret: string; otpauth_uri: string };
  const confirmed = (await post('/auth/mfa/totp/confirm', token, { code: codeAt(started.secret) })) as { recovery_codes: string[] };
  return { ...account, token, secret: started.secret, uri: started.otpauth_uri, recoveryCodes: confirmed.recovery_codes };
}
