import test from 'ava';
import { SignJWT, UnsecuredJWT, generateKeyPair } from 'jose';
import { bearerIdentifier as identifyCaller } from '../../../src/modules/auth/index.ts';
import { createRole, grantRoleToAccount } from '../../../src/modules/auth/service.ts';
import { loadSigningKey } from '../../../src/modules/auth/signingKeys.ts';
import { updateRolePermissions } from '../../../src/modules/auth/store/roles.ts';
import { waitFor } from '../../support/cluster.ts';
import { useInstances } from '../../support/fixture.ts';
import { assertProblem } from '../../support/problems.ts';
import { accountWithToken, bearer, testBox } from '../../support/tokens.ts';

const app = useInstances(test);

const system = (headers: Record<string, string> = {}) => fetch(`${app.instance.url}/ops/system`, { headers });

test('no Authorization header is 401 unauthenticated', async (t) => {
  await assertProblem(t, await system(), 401, 'unauthenticated');
});

for (const [name, header] of [
  ['garbage', 'garbage'],
  ['a Basic credential', 'Basic dXNlcjpwYXNz'],
  ['an empty bearer', 'Bearer '],
  ['a bearer that is not a JWT', 'Bearer not-a-token'],
  ['a JWT with a broken signature', 'Bearer eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJ4In0.AAAA'],
] as const) {
  test(`${name} is 401 unauthenticated`, async (t) => {
    await assertProblem(t, await system({ Authorization: header }), 401, 'unauthenticated');
  });
}

test('an unsigned token (alg none) is 401', async (t) => {
  const admin = await accountWithToken(app.db.pool, { roles: ['platform_admin'] });
  const token = new UnsecuredJWT({ amr: ['cli'], email: admin.email }).setSubject(admin.id).setIssuer('backplane').setExpirationTime('5m').encode();
  await assertProblem(t, await system(bearer(token)), 401, 'unauthenticated');
});

test('a token signed by another key is 401', async (t) => {
  const admin = await accountWithToken(app.db.pool, { roles: ['platform_admin'] });
  const { privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
  const token = await new SignJWT({ amr: ['cli'] })
    .setProtectedHeader({ alg: 'EdDSA', typ: 'at+jwt' })
    .setSubject(admin.id)
    .setIssuer('backplane')
    .setExpirationTime('5m')
    .sign(privateKey);
  await assertProblem(t, await system(bearer(token)), 401, 'unauthenticated');
});

test('a token signed with HMAC (wrong algorithm) is 401', async (t) => {
  const admin = await accountWithToken(app.db.pool, { roles: ['platform_admin'] });
  const token = await new SignJWT({ amr: ['cli'] })
    .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt' })
    .setSubject(admin.id)
    .setIssuer('backplane')
    .setExpirationTime('5m')
    .sign(new TextEncoder().encode('a-shared-secret-that-is-long-enough'));
  await assertProblem(t, await system(bearer(token)), 401, 'unauthenticated');
});

test('an expired token is 401', async (t) => {
  const admin = await accountWithToken(app.db.pool, { roles: ['platform_admin'], ttlSeconds: 1 });
  await new Promise((resolve) => setTimeout(resolve, 2100));
  await assertProblem(t, await system(bearer(admin.token)), 401, 'unauthenticated');
});

test('a token accepted while valid is refused once it expires (the verified-token cache ends at exp)', async (t) => {
  const admin = await accountWithToken(app.db.pool, { roles: ['platform_admin'], ttlSeconds: 2 });
  t.is((await system(bearer(admin.token))).status, 200);
  await new Promise((resolve) => setTimeout(resolve, 2100));
  await assertProblem(t, await system(bearer(admin.token)), 401, 'unauthenticated');
});

test('an account without roles is 403 forbidden', async (t) => {
  const nobody = await accountWithToken(app.db.pool);
  await assertProblem(t, await system(bearer(nobody.token)), 403, 'forbidden');
});

test('platform_admin and ops_viewer read the system description, granted just before the request', async (t) => {
  for (const role of ['platform_admin', 'ops_viewer']) {
    const account = await accountWithToken(app.db.pool, { roles: [role] });
    t.is((await system(bearer(account.token))).status, 200, role);
  }
});

test('a custom role needs ops.system.read, and a change applies to the next requests', async (t) => {
  const operator = await accountWithToken(app.db.pool, { permissions: ['ops.audit.read'] });
  await assertProblem(t, await system(bearer(operator.token)), 403, 'forbidden');

  const role = `watchers_${Date.now()}`;
  await createRole(app.db.pool, role, ['ops.system.read']);
  await grantRoleToAccount(app.db.pool, operator.email, role);
  await waitFor(async () => ((await system(bearer(operator.token))).status === 200 ? true : undefined), 2_000, 'the grant to apply');

  await updateRolePermissions(app.db.pool, role, ['ops.audit.read']);
  await waitFor(async () => ((await system(bearer(operator.token))).status === 403 ? true : undefined), 2_000, 'the revocation to apply');
  t.pass();
});

test('the JWKS lists the public key and no private part', async (t) => {
  const response = await fetch(`${app.instance.url}/.well-known/jwks.json`);
  const body = (await response.json()) as { keys: Array<Record<string, string | undefined>> };
  t.is(response.status, 200);
  t.is(body.keys.length, 1);
  t.is(body.keys[0]!.crv, 'Ed25519');
  t.is(body.keys[0]!.d, undefined);
});

test('the scheme is case-insensitive (RFC 9110): bearer and BEARER work, also in identifyCaller', async (t) => {
  const admin = await accountWithToken(app.db.pool, { roles: ['platform_admin'] });
  for (const scheme of ['bearer', 'BEARER', 'Bearer', 'bEaReR']) {
    t.is((await system({ Authorization: `${scheme} ${admin.token}` })).status, 200, scheme);
  }
  t.is((await system({ Authorization: `bearer  ${admin.token}` })).status, 200, 'more than one space');
  await assertProblem(t, await system({ Authorization: `bearer${admin.token}` }), 401, 'unauthenticated');
  const identify = identifyCaller(app.db.pool, await loadSigningKey(app.db.pool, undefined, testBox));
  t.is((await identify(`bearer ${admin.token}`)).id, admin.id);
  await t.throwsAsync(identify(`Basic ${admin.token}`), { message: /not valid/ });
});
