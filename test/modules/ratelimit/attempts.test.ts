import test from 'ava';
import pino from 'pino';
import { RateLimitError, createRateLimiter, mfaChangeKey, signInKey, spendAttempt, type LimiterName } from '../../../src/modules/ratelimit/index.ts';
import { createPool, type InstrumentedPool } from '../../../src/platform/db/pool.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';

let db: TestDatabase;
let pool: InstrumentedPool;

test.before(async () => {
  db = await createTestDatabase();
  pool = createPool({ connectionString: db.url, max: 2, applicationName: 'attempts-test' });
});

test.after.always(async () => {
  await pool?.end();
  await db?.drop();
});

const limiter = () =>
  createRateLimiter<LimiterName>({
    db: pool,
    limits: {
      auth_ip: () => ({ limit: 60, periodSeconds: 60 }),
      auth_login: () => ({ limit: 3, periodSeconds: 900 }),
      auth_login_address: () => ({ limit: 4, periodSeconds: 900 }),
      auth_mfa: () => ({ limit: 2, periodSeconds: 900 }),
    },
    logger: pino({ level: 'silent' }),
    decisionTimeoutMs: 10_000,
  });

/** Spends an attempt as the sign-in use cases do: the refusal thrown, the RateLimit fields kept. */
async function spend(...[limits, name, key, setHeader]: [...Parameters<typeof spendAttempt>, (name: string, value: string) => void]) {
  const attempt = await spendAttempt(limits, name, key);
  if (!attempt.allowed) {
    throw attempt.refusal;
  }
  for (const [header, value] of Object.entries(attempt.headers)) {
    setHeader(header, value);
  }
}

test('sign-in attempts: the budget per email and network, then 429 too_many_attempts with Retry-After', async (t) => {
  const limits = limiter();
  const headers: Record<string, string> = {};
  const setHeader = (name: string, value: string) => void (headers[name] = value);
  for (let attempt = 0; attempt < 3; attempt += 1) {
    await spend(limits, 'auth_login', signInKey(' Someone@Example.com', '198.51.100.9'), setHeader);
  }
  t.is(headers['RateLimit-Policy'], '"auth_login";q=3;w=900');
  t.regex(headers.RateLimit!, /^"auth_login";r=0;t=\d+$/);
  const error = await t.throwsAsync(spend(limits, 'auth_login', signInKey('someone@example.com', '198.51.100.9'), setHeader), {
    instanceOf: RateLimitError,
  });
  t.is(error!.code, 'too_many_attempts');
  // One interval (300 s) less the moments the attempts took; RateLimit's t says the same.
  const retryAfter = Number(error!.headers!['Retry-After']);
  t.true(retryAfter <= 300 && retryAfter >= 295);
  t.is(error!.headers!.RateLimit, `"auth_login";r=0;t=${retryAfter}`);
  // Another network, or another email, has its own budget; an IPv6 client is its /64.
  await t.notThrowsAsync(spend(limits, 'auth_login', signInKey('someone@example.com', '198.51.100.10'), setHeader));
  await t.notThrowsAsync(spend(limits, 'auth_login', signInKey('other@example.com', '198.51.100.9'), setHeader));
  t.is(signInKey('a@example.com', '2001:db8:1:2::1'), signInKey('a@example.com', '2001:db8:1:2:ffff::9'));
});

test('two-factor change attempts share one budget per account', async (t) => {
  const limits = limiter();
  const account = `account-${Date.now()}`;
  await spend(limits, 'auth_mfa', mfaChangeKey(account), () => undefined);
  await spend(limits, 'auth_mfa', mfaChangeKey(account), () => undefined);
  const error = await t.throwsAsync(
    spend(limits, 'auth_mfa', mfaChangeKey(account), () => undefined),
    { instanceOf: RateLimitError },
  );
  t.is(error!.code, 'too_many_attempts');
  await t.notThrowsAsync(spend(limits, 'auth_mfa', mfaChangeKey(`${account}-other`), () => undefined));
});
