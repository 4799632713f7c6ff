import test from 'ava';
import { backoffSeconds } from '../../../../src/modules/jobs/queue/backoff.ts';

const backoff = { initialSeconds: 2, maxSeconds: 60 };

test('the wait doubles with each failed attempt up to its cap', (t) => {
  const highest = [1, 2, 3, 4, 5, 6, 7].map((attempt) => backoffSeconds(backoff, attempt, () => 1));
  t.deepEqual(highest, [2, 4, 8, 16, 32, 60, 60]);
});

test('jitter draws each wait from the upper half of its step, never sooner', (t) => {
  t.deepEqual(
    [1, 3, 9].map((attempt) => backoffSeconds(backoff, attempt, () => 0)),
    [1, 4, 30],
  );
  t.is(
    backoffSeconds(backoff, 3, () => 0.5),
    6,
  );
});
