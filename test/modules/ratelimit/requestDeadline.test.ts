import test from 'ava';
import pino from 'pino';
import { LIMITER_NAMES, type LimiterName, type RateLimitSettings, createRateLimiter, spendAttempt } from '../../../src/modules/ratelimit/index.ts';
import type { TakeBuckets } from '../../../src/modules/ratelimit/store.ts';
import { withDeadlineAt } from '../../../src/platform/db/deadline.ts';
import { databaseUnavailableReason } from '../../../src/platform/db/unavailable.ts';

// Issue 30 item 9: a decision's wait ends at the request's deadline when that comes before the limiter's bound.

const silent = pino({ level: 'silent' });
const perHour = () => ({ limit: 10, periodSeconds: 3600 });
/** A database that never answers, as a frozen one. */
const frozen: TakeBuckets = () => new Promise(() => undefined);

function frozenLimiter(decisionTimeoutMs: number) {
  const limits = Object.fromEntries(LIMITER_NAMES.map((name) => [name, perHour])) as RateLimitSettings;
  return createRateLimiter<LimiterName>({ take: frozen, limits, logger: silent, decisionTimeoutMs, liveInstances: () => 1 });
}

test('a decision ends undecided at its request deadline, before the limiter bound, without deciding alone', async (t) => {
  const limiter = frozenLimiter(5_000);
  let boundOnlySettled = false;
  // Taken first, bounded by the limiter alone (5 s): a later take must not wait behind it.
  void limiter.take('auth_login', 'bound only').then(() => (boundOnlySettled = true));
  const decision = await limiter.take('auth_login', 'request bound', performance.now() + 200);
  t.like(decision, { allowed: false, undecided: true });
  t.false(boundOnlySettled);
  t.is(limiter.aloneSince(), undefined);
});

test('a request already past its deadline is refused undecided at once', async (t) => {
  const limiter = frozenLimiter(5_000);
  t.like(await limiter.take('auth_login', 'late', performance.now() - 1), { allowed: false, undecided: true });
});

test('the limiter bound still ends a wait when the request has more time left: decided alone', async (t) => {
  const limiter = frozenLimiter(200);
  const decision = await limiter.take('auth_login', 'bound first', performance.now() + 60_000);
  t.like(decision, { allowed: true, source: 'fallback' });
  t.truthy(limiter.aloneSince());
});

test('an attempt spent inside a request deadline that passes is 503 database_unavailable (deadline)', async (t) => {
  const limiter = frozenLimiter(5_000);
  const spent = await withDeadlineAt(performance.now() + 200, () => spendAttempt(limiter, 'auth_login', 'sign-in'));
  t.false(spent.allowed);
  if (!spent.allowed) {
    t.is(databaseUnavailableReason(spent.refusal), 'deadline');
    t.false(spent.overLimit);
  }
});
