import { randomBytes } from 'node:crypto';
import test from 'ava';
import { normalizeEmail, parseEmail } from '../../../src/modules/auth/index.ts';
import { createAccount } from '../../../src/modules/auth/service.ts';
import { findAccountByEmail } from '../../../src/modules/auth/store/accounts.ts';
import { useInstances } from '../../support/fixture.ts';
import { assertProblem } from '../../support/problems.ts';
import { PASSWORD, raiseAddressLimit, signIn } from '../../support/signIn.ts';

const LOGIN_ATTEMPTS = 10; // the default of auth.login_attempts

const app = useInstances(test, { count: 2, options: { rateLimitTimeoutMs: 10_000 }, accounts: { admin: { roles: ['platform_admin'] } } });
test.before(() => raiseAddressLimit(app.instance.url, app.accounts.admin.token));

const KELVIN = '\u212A';
const DOTTED_CAPITAL_I = '\u0130';
const fullWidth = (text: string) => text.replace(/[\x21-\x7e]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 0xfee0));
// Letters i and k, so the U+0130 and Kelvin spellings exist; hex digits hold no i or k.
const newAddress = () => `kiwi-${randomBytes(4).toString('hex')}@example.com`;

/** Spellings that must find the account of `address` (all lower-case ASCII). */
const sameAccountSpellings = (address: string) => [
  address.toUpperCase(),
  `${KELVIN}${address.slice(1)}`,
  fullWidth(address),
  `${address}.`,
  `  ${address}\u00a0`,
  `\u3000${address.replace('@', '\uff20')}`,
];

test('normalizeEmail: NFKC, trimmed, one trailing dot of the domain, lower case; idempotent', (t) => {
  t.is(normalizeEmail('  Kiwi@Example.COM. '), 'kiwi@example.com');
  t.is(normalizeEmail(`${KELVIN}iwi@example.com`), 'kiwi@example.com');
  t.is(normalizeEmail(fullWidth('Kiwi@Example.com')), 'kiwi@example.com');
  t.is(normalizeEmail('\u017Fam@example.com'), 'sam@example.com', 'the long s is an s under NFKC');
  t.deepEqual(parseEmail(' Kiwi@Example.com. '), { normalized: 'kiwi@example.com', display: 'Kiwi@Example.com' });
  for (const spelling of sameAccountSpellings('kiwi@example.com')) {
    t.is(normalizeEmail(spelling), 'kiwi@example.com', JSON.stringify(spelling));
    t.is(normalizeEmail(normalizeEmail(spelling)), 'kiwi@example.com');
  }
});

test('normalizeEmail refuses what a person could not tell from another address, and control characters', (t) => {
  for (const refused of [
    `v${DOTTED_CAPITAL_I}ewer@example.com`,
    'vi\u0307ewer@example.com',
    'v\u0131ewer@example.com',
    'viewer@ex\u0430mple.com',
    'stra\u00dfe@example.com',
    'viewer\u200b@example.com',
    'viewer@example.com\n',
    'vie\u0000wer@example.com',
    'vie\u202ewer@example.com',
    'viewer@example..com',
    'viewer@example.com..',
    'vie wer@example.com',
    'viewer@@example.com',
    '@example.com',
    'viewer@',
    'viewer',
    `${'a'.repeat(250)}@example.com`,
  ]) {
    t.throws(() => normalizeEmail(refused), { message: /not valid/ }, JSON.stringify(refused));
  }
});

test('accounts are unique by the normalised address, whatever the spelling', async (t) => {
  const address = newAddress();
  const account = await createAccount(app.db.pool, address, undefined);
  t.is(account.email, address);
  for (const spelling of sameAccountSpellings(address)) {
    await t.throwsAsync(createAccount(app.db.pool, spelling, undefined), { message: /exists/ }, JSON.stringify(spelling));
    t.is((await findAccountByEmail(app.db.pool, spelling))?.id, account.id);
  }
  await t.throwsAsync(createAccount(app.db.pool, `${DOTTED_CAPITAL_I}${address}`, undefined), { message: /not valid/ });
  const stored = await app.db.pool.query(`select email_normalized from accounts where id = $1`, [account.id]);
  t.is(stored.rows[0].email_normalized, address);
});

test('every spelling that signs in to an account spends its one budget, on any instance; U+0130 is refused', async (t) => {
  const address = newAddress();
  const account = await createAccount(app.db.pool, address, PASSWORD);
  const spellings = sameAccountSpellings(address);
  for (const [index, spelling] of spellings.entries()) {
    const answer = await signIn(app.instances[index % 2]!.url, spelling);
    t.is(answer.status, 200, JSON.stringify(spelling));
  }
  // The probe's attack: a dotted capital I gets no budget of its own, it is refused before any is spent.
  await assertProblem(t, await signIn(app.instance.url, address.replace('i', DOTTED_CAPITAL_I)), 422, 'invalid_email');
  await assertProblem(t, await signIn(app.instance.url, `${address}\u0000`), 422, 'invalid_email');
  for (let attempt = spellings.length; attempt < LOGIN_ATTEMPTS; attempt += 1) {
    await assertProblem(t, await signIn(app.instances[attempt % 2]!.url, spellings[attempt % spellings.length]!, 'wrong'), 401, 'invalid_credentials');
  }
  for (const [index, spelling] of [address, ...spellings].entries()) {
    await assertProblem(t, await signIn(app.instances[index % 2]!.url, spelling), 429, 'too_many_attempts');
  }
  const audit = await app.db.pool.query(
    `select distinct actor_label from audit_events where action like 'auth.sign_in.%' and (resource_id = $1 or actor_label = $2)`,
    [account.id, address],
  );
  t.deepEqual(audit.rows, [{ actor_label: address }]);
});
