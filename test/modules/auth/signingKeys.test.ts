import test from 'ava';
import { randomBytes } from 'node:crypto';
import { type CryptoKey, calculateJwkThumbprint, decodeProtectedHeader, exportJWK, exportPKCS8, generateKeyPair, importJWK } from 'jose';
import type { RunningInstance } from '../../../src/app/instance.ts';
import { freePort } from '../../../src/platform/db/embedded.ts';
import { issueAccessToken } from '../../../src/modules/auth/accessTokens.ts';
import { createAccount, grantRoleToAccount } from '../../../src/modules/auth/service.ts';
import { type SigningKey, SigningKeyUnreadable, loadSigningKey } from '../../../src/modules/auth/signingKeys.ts';
import { createSecretBox } from '../../../src/platform/secrets/secretBox.ts';
import { runCli } from '../../support/cluster.ts';
import { type TestDatabase, createTestDatabase } from '../../support/database.ts';
import { startTestInstance } from '../../support/instance.ts';
import { assertProblem } from '../../support/problems.ts';
import { accountWithPassword, signIn } from '../../support/signIn.ts';
import { bearer, testBox } from '../../support/tokens.ts';

let db: TestDatabase;
const instances: RunningInstance[] = [];
let admin: { id: string; email: string };
/** The key the previous release generated and stored in clear, kept to mint its tokens. */
let oldKey: SigningKey;

const mint = (key: SigningKey, ttlSeconds = 600) =>
  issueAccessToken(key, { accountId: admin.id, email: admin.email, methods: ['cli'] }, ttlSeconds).then((issued) => issued.token);
const system = (instance: RunningInstance, token: string) => fetch(`${instance.url}/ops/system`, { headers: bearer(token) });
const jwksKids = async (instance: RunningInstance) =>
  ((await (await fetch(`${instance.url}/.well-known/jwks.json`)).json()) as { keys: Array<{ kid: string }> }).keys.map((key) => key.kid).sort();
/** The kid of the access token a password sign-in on this instance returns. */
async function signedInKid(instance: RunningInstance): Promise<string | undefined> {
  const person = await accountWithPassword(db.pool);
  const response = await signIn(instance.url, person.email);
  const body = (await response.json()) as { access_token: string };
  return decodeProtectedHeader(body.access_token).kid;
}
const rows = async () =>
  (
    await db.pool.query<{ kid: string; private_jwk: unknown; sealed_private_jwk: string | null; retired_at: Date | null }>(
      `select kid, private_jwk, sealed_private_jwk, retired_at from auth_signing_keys order by created_at`,
    )
  ).rows;

test.serial.before(async () => {
  db = await createTestDatabase();
  admin = await createAccount(db.pool, `admin-${randomBytes(4).toString('hex')}@example.com`, undefined);
  await grantRoleToAccount(db.pool, admin.email, 'platform_admin');
  // As the previous release wrote it: the private JWK in clear, no sealed column.
  const pair = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
  const publicJwk = await exportJWK(pair.publicKey);
  const kid = await calculateJwkThumbprint(publicJwk);
  await db.pool.query(`insert into auth_signing_keys (kid, private_jwk, public_jwk) values ($1, $2, $3)`, [
    kid,
    await exportJWK(pair.privateKey),
    { ...publicJwk, kid, alg: 'EdDSA', use: 'sig' },
  ]);
  oldKey = { kid, privateKey: pair.privateKey, publicJwk: { ...publicJwk, kid, alg: 'EdDSA', use: 'sig' } };
});

test.after.always(async () => {
  await Promise.all(instances.map((instance) => instance.drain()));
  await db?.drop();
});

test.serial('start-up seals the key the previous release stored in clear; its tokens still verify', async (t) => {
  const before = await mint(oldKey);
  instances.push(await startTestInstance(db.url), await startTestInstance(db.url));
  const [row, ...others] = await rows();
  t.is(others.length, 0);
  t.is(row!.kid, oldKey.kid);
  t.is(row!.private_jwk, null);
  const d = (await exportJWK(oldKey.privateKey)).d!;
  t.false(row!.sealed_private_jwk!.includes(d));
  t.is((await system(instances[0]!, before)).status, 200);
  t.is((await system(instances[1]!, await mint(oldKey))).status, 200);
});

test.serial('a key read from the table does not sign without APP_ENCRYPTION_KEY', async (t) => {
  const [row] = await rows();
  await t.throwsAsync(importJWK(row!.private_jwk as never, 'EdDSA'));
  await t.throwsAsync(importJWK(row!.sealed_private_jwk as never, 'EdDSA'));
  const otherBox = createSecretBox([randomBytes(32)]);
  t.throws(() => otherBox.open(row!.sealed_private_jwk!, `auth_signing_key:${row!.kid}`));
  await t.throwsAsync(loadSigningKey(db.pool, undefined, otherBox), { instanceOf: SigningKeyUnreadable, message: /APP_ENCRYPTION_KEY/ });
  // With the right key it opens, as the instances do.
  t.is((await loadSigningKey(db.pool, undefined, testBox)).kid, oldKey.kid);
});

test.serial('a wrong APP_ENCRYPTION_KEY stops an instance and the commands with one line naming the variable', async (t) => {
  const wrong = randomBytes(32).toString('hex');
  await t.throwsAsync(startTestInstance(db.url, { APP_ENCRYPTION_KEY: wrong }), { instanceOf: SigningKeyUnreadable, message: /APP_ENCRYPTION_KEY/ });
  for (const args of [
    ['serve', '--instances', '1'],
    ['token', 'issue', '--email', admin.email],
    ['keys', 'rotate'],
  ]) {
    const result = await runCli(args, { DATABASE_URL: db.url, APP_ENCRYPTION_KEY: wrong, PORT: String(await freePort()), APP_METRICS_PORT: '0' });
    t.is(result.code, 2, args.join(' '));
    t.is(result.stderr.trim().split('\n').length, 1);
    t.regex(result.stderr, /APP_ENCRYPTION_KEY/);
  }
  t.is((await rows()).length, 1, 'nothing rotated');
});

test.serial('a token with a kid no key has is 401, never 500', async (t) => {
  const stranger = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
  const made: SigningKey = { kid: 'made-up-kid', privateKey: stranger.privateKey as CryptoKey, publicJwk: {} };
  const responses = await Promise.all(Array.from({ length: 5 }, () => mint(made).then((token) => system(instances[0]!, token))));
  for (const response of responses) {
    await assertProblem(t, response, 401, 'unauthenticated');
  }
  const forged: SigningKey = { ...made, kid: oldKey.kid };
  await assertProblem(t, await system(instances[0]!, await mint(forged)), 401, 'unauthenticated');
});

test.serial('keys rotate: the new key signs, the old one still verifies, JWKS lists both; a lagging instance verifies the new key at once', async (t) => {
  const old = await mint(oldKey);
  // The second instance hears of this rotation only through the token: no NOTIFY.
  await db.pool.query(`alter table auth_signing_keys disable trigger auth_signing_keys_changed`);
  let result;
  try {
    result = await runCli(['keys', 'rotate', '--reason', 'yearly'], { DATABASE_URL: db.url });
  } finally {
    await db.pool.query(`alter table auth_signing_keys enable trigger auth_signing_keys_changed`);
  }
  t.is(result.code, 0, result.stderr);
  const newKey = await loadSigningKey(db.pool, undefined, testBox);
  t.not(newKey.kid, oldKey.kid);
  t.is((await system(instances[1]!, await mint(newKey))).status, 200);
  t.is((await system(instances[1]!, old)).status, 200);
  t.deepEqual(await jwksKids(instances[1]!), [oldKey.kid, newKey.kid].sort());
  // Signed by the instance from now on: a sign-in's token names the new key.
  t.is(await signedInKid(instances[1]!), newKey.kid);

  const stored = await rows();
  t.deepEqual(
    stored.map((row) => [row.kid, row.retired_at !== null, row.private_jwk, row.sealed_private_jwk !== null]),
    [
      [oldKey.kid, true, null, false],
      [newKey.kid, false, null, true],
    ],
  );
  const audit = await db.pool.query(`select actor_label, resource_id, metadata from audit_events where action = 'auth.signing_key.rotated'`);
  t.is(audit.rowCount, 1);
  t.is(audit.rows[0].actor_label, 'system:cli');
  t.is(audit.rows[0].resource_id, newKey.kid);
  t.is(audit.rows[0].metadata.retired_kid, oldKey.kid);

  const listed = await runCli(['keys', 'list', '--json'], { DATABASE_URL: db.url });
  t.is(listed.code, 0, listed.stderr);
  t.deepEqual(
    (JSON.parse(listed.stdout) as { keys: Array<{ kid: string; state: string }> }).keys.map((key) => [key.kid, key.state]).sort(),
    [
      [oldKey.kid, 'verifying'],
      [newKey.kid, 'signing'],
    ].sort(),
  );
});

test.serial('instances follow a rotation by NOTIFY: tokens they issue carry the new kid', async (t) => {
  const result = await runCli(['keys', 'rotate'], { DATABASE_URL: db.url });
  t.is(result.code, 0, result.stderr);
  const newest = await loadSigningKey(db.pool, undefined, testBox);
  const deadline = Date.now() + 10_000;
  while (!(await jwksKids(instances[0]!)).includes(newest.kid) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  t.true((await jwksKids(instances[0]!)).includes(newest.kid));
  t.is(await signedInKid(instances[0]!), newest.kid);
});

test.serial('after the overlap the old key verifies nothing and leaves JWKS; the next rotation deletes it', async (t) => {
  const tokenBefore = await mint(oldKey);
  t.is((await system(instances[0]!, tokenBefore)).status, 200);
  await db.pool.query(`update auth_signing_keys set verifies_until = now() - interval '1 second' where kid = $1`, [oldKey.kid]);
  for (const instance of instances) {
    const deadline = Date.now() + 10_000;
    while ((await jwksKids(instance)).includes(oldKey.kid) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    t.false((await jwksKids(instance)).includes(oldKey.kid));
    await assertProblem(t, await system(instance, await mint(oldKey)), 401, 'unauthenticated');
  }
  t.is((await runCli(['keys', 'rotate'], { DATABASE_URL: db.url })).code, 0);
  t.false((await rows()).some((row) => row.kid === oldKey.kid));
});

test('keys rotate refuses while APP_JWT_PRIVATE_KEY signs', async (t) => {
  const { privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
  const result = await runCli(['keys', 'rotate'], { DATABASE_URL: db.url, APP_JWT_PRIVATE_KEY: await exportPKCS8(privateKey) });
  t.is(result.code, 2);
  t.regex(result.stderr, /APP_JWT_PRIVATE_KEY/);
});
