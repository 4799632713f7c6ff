import test from 'ava';
import { useInstances } from '../../support/fixture.ts';
import { sendJson } from '../../support/http.ts';
import { assertProblem } from '../../support/problems.ts';
import { type TestAccount, accountWithToken, bearer } from '../../support/tokens.ts';

const SECOND_FACTOR = [['pwd', 'otp'], ['pwd', 'recovery'], ['cli']];
const ONE_FACTOR = [['pwd'], ['google'], []];

let strong: TestAccount[];
let weak: TestAccount[];
const app = useInstances(test, {
  accounts: { admin: { roles: ['platform_admin'] }, outsider: { methods: ['pwd'] } },
  async seed(db) {
    strong = await Promise.all(SECOND_FACTOR.map((methods) => accountWithToken(db.pool, { roles: ['ops_viewer'], methods })));
    weak = await Promise.all(ONE_FACTOR.map((methods) => accountWithToken(db.pool, { roles: ['ops_viewer'], methods })));
  },
});

const system = (account: TestAccount) => fetch(`${app.instance.url}/ops/system`, { headers: bearer(account.token) });
const requireMfa = (value: boolean) =>
  sendJson(
    'PUT',
    `${app.instance.url}/ops/settings/auth.ops_require_mfa`,
    { value, reason: value ? 'back to normal' : 'lab without authenticators' },
    app.headers.admin,
  );

test.serial('with auth.ops_require_mfa on (the default), ops permissions need a second factor or a CLI token', async (t) => {
  for (const [index, account] of strong.entries()) {
    t.is((await system(account)).status, 200, SECOND_FACTOR[index]!.join('+'));
  }
  for (const account of weak) {
    await assertProblem(t, await system(account), 403, 'mfa_required');
  }
  // Lacking the permission is forbidden whatever the factors.
  await assertProblem(t, await system(app.accounts.outsider), 403, 'forbidden');
});

test.serial('switched off, a one-factor token reaches ops; switched on again, it does not', async (t) => {
  t.is((await requireMfa(false)).status, 200);
  for (const account of weak) {
    t.is((await system(account)).status, 200);
  }
  t.is((await requireMfa(true)).status, 200);
  await assertProblem(t, await system(weak[0]!), 403, 'mfa_required');
});
