import test from 'ava';
import { type CountedBeat, type ShareCount, UNCOUNTED, countShares, shareDivisor } from '../../../src/modules/releases/index.ts';
import { gcraRule, shareRule } from '../../../src/modules/ratelimit/rules.ts';

const beat = (running: number, leastCounted: number, othersBeatSince = true): CountedBeat => ({ running, leastCounted, othersBeatSince });
const after = (...beats: CountedBeat[]): ShareCount => beats.reduce(countShares, UNCOUNTED);

/** What a fresh key's bucket grants alone on each instance, together. */
const grantedTogether = (divisors: Array<number | undefined>, limit = 60) =>
  divisors.reduce<number>((sum, divisor) => sum + shareRule(gcraRule({ limit, periodSeconds: 3600 }), divisor).burst, 0);

test('an instance that has not beaten, or whose own row holds no count yet, has no share', (t) => {
  t.is(shareDivisor(UNCOUNTED), undefined);
  // The first beat writes 0: nothing was held before it.
  t.is(shareDivisor(after(beat(1, 0))), undefined);
  t.is(after(beat(3, 0)).counted, 3);
});

test('an instance becomes sure once every running row counted at least as many and beat since its previous beat', (t) => {
  t.is(shareDivisor(after(beat(3, 0), beat(3, 3))), 3);
  // Another instance still holds 2: it may act on a count that misses this one.
  t.is(shareDivisor(after(beat(3, 0), beat(3, 2))), undefined);
  // Every count is 3, but one instance has not beaten since: a beat of it that missed this one may still be in flight.
  t.is(shareDivisor(after(beat(3, 0), beat(3, 3, false))), undefined);
  // Counts larger than the reading (a row that stopped meanwhile) only make the shares smaller.
  t.is(shareDivisor(after(beat(2, 0), beat(2, 3))), 2);
});

test('a sure instance stays sure, following the count up and down', (t) => {
  const sure = after(beat(2, 0), beat(2, 2));
  t.is(shareDivisor(sure), 2);
  // A newcomer: its own row holds 0, and the others' 2; this one's share shrinks at once.
  t.is(shareDivisor(countShares(sure, beat(3, 0, false))), 3);
  // An instance stopped or gone silent for three beats: the share grows.
  t.is(shareDivisor(countShares(countShares(sure, beat(3, 2)), beat(2, 2))), 2);
});

test('start-up of three instances counted 1, 2 and 3 at their first beats: the shares together stay within the limit', (t) => {
  // The case: they granted 60 + 30 + 20 alone.
  const first = after(beat(1, 0));
  const second = after(beat(2, 0));
  const third = after(beat(3, 0));
  t.deepEqual([first, second, third].map(shareDivisor), [undefined, undefined, undefined]);
  // The first instance's second beat, before the others wrote their counts: it counted 3 and holds 1.
  const firstAgain = countShares(first, beat(3, 0));
  t.is(shareDivisor(firstAgain), undefined);
  t.true(grantedTogether([firstAgain, second, third].map(shareDivisor)) <= 60);
});

test('a scale-up from 2 to 4: the old instances keep or shrink their shares, the newcomers grant nothing until counted', (t) => {
  const old = after(beat(2, 0), beat(2, 2));
  const newcomer = after(beat(4, 0));
  // Before the old ones beat again, and after: at most the limit.
  t.is(grantedTogether([shareDivisor(old), shareDivisor(old), shareDivisor(newcomer), shareDivisor(newcomer)]), 60);
  const oldAgain = countShares(old, beat(4, 0, false));
  t.is(grantedTogether([shareDivisor(oldAgain), shareDivisor(old), shareDivisor(newcomer), shareDivisor(newcomer)]), 45);
  // Once the old rows hold 4 (written at their beat after the one that read 4), the newcomers are sure.
  const newcomerSure = countShares(newcomer, beat(4, 4));
  t.is(shareDivisor(newcomerSure), 4);
  t.is(grantedTogether([4, 4, 4, 4]), 60);
});
