import test from 'ava';
import type { RunningInstance } from '../../../src/app/instance.ts';
import { type TestDatabase, createTestDatabase } from '../../support/database.ts';
import { sendJson } from '../../support/http.ts';
import { startTestInstance } from '../../support/instance.ts';
import { assertProblem } from '../../support/problems.ts';
import { type TestAccount, accountWithToken, bearer } from '../../support/tokens.ts';

const SECOND_FACTOR = [['pwd', 'otp'], ['pwd', 'recovery'], ['cli']];
const ONE_FACTOR = [['pwd'], ['google'], []];

let db: TestDatabase;
let instance: RunningInstance;
let admin: TestAccount;
let strong: TestAccount[];
let weak: TestAccount[];
let outsider: TestAccount;

test.before(async () => {
  db = await createTestDatabase();
  // Accounts first: a starting instance loads every grant before it serves.
  admin = await accountWithToken(db.pool, { roles: ['platform_admin'] });
  strong = await Promise.all(SECOND_FACTOR.map((methods) => accountWithToken(db.pool, { roles: ['ops_viewer'], methods })));
  weak = await Promise.all(ONE_FACTOR.map((methods) => accountWithToken(db.pool, { roles: ['ops_viewer'], methods })));
  outsider = await accountWithToken(db.pool, { methods: ['pwd'] });
  instance = await startTestInstance(db.url);
});

test.after.always(async () => {
  await instance?.drain();
  await db?.drop();
});

const system = (account: TestAccount) => fetch(`${instance.url}/ops/system`, { headers: bearer(account.token) });
const requireMfa = (value: boolean) =>
  sendJson('PUT', `${instance.url}/ops/settings/auth.ops_require_mfa`, { value, reason: value ? 'back to normal' : 'lab without authenticators' }, bearer(admin.token));

test.serial('with auth.ops_require_mfa on (the default), ops permissions need a second factor or a CLI token', async (t) => {
  for (const [index, account] of strong.entries()) {
    t.is((await system(account)).status, 200, SECOND_FACTOR[index]!.join('+'));
  }
  for (const account of weak) {
    await assertProblem(t, await system(account), 403, 'mfa_required');
  }
  // Lacking the permission is forbidden whatever the factors.
  await assertProblem(t, await system(outsider), 403, 'forbidden');
});

test.serial('switched off, a one-factor token reaches ops; switched on again, it does not', async (t) => {
  t.is((await requireMfa(false)).status, 200);
  for (const account of weak) {
    t.is((await system(account)).status, 200);
  }
  t.is((await requireMfa(true)).status, 200);
  await assertProblem(t, await system(weak[0]!), 403, 'mfa_required');
});
