import test from 'ava';
import { durationSeconds, formatDurationSeconds, parseDurationNanos } from '../../src/platform/durations.ts';

test('Go duration syntax parses to exact nanoseconds', (t) => {
  const cases: Array<[string, bigint]> = [
    ['0', 0n],
    ['0s', 0n],
    ['15m', 900_000_000_000n],
    ['87600h', 315_360_000_000_000_000n],
    ['1h30m', 5_400_000_000_000n],
    ['1.5h', 5_400_000_000_000n],
    ['.5s', 500_000_000n],
    ['1.s', 1_000_000_000n],
    ['300ms', 300_000_000n],
    ['2us', 2_000n],
    ['2µs', 2_000n],
    ['7ns', 7n],
    ['-5m', -300_000_000_000n],
    ['+5m', 300_000_000_000n],
    ['1h1h', 7_200_000_000_000n],
  ];
  for (const [text, nanos] of cases) {
    t.is(parseDurationNanos(text), nanos, text);
  }
});

test('anything else is not a duration', (t) => {
  for (const text of ['', '15', 'm', '1x', '1 h', ' 1h', '1h ', '.h', '1H', '1d', 'h1', '--1h', '1e3s', 'P1D', '99999999999999999999h']) {
    t.is(parseDurationNanos(text), undefined, JSON.stringify(text));
  }
});

test('whole seconds only for settings', (t) => {
  t.is(durationSeconds('1h30m'), 5400);
  t.is(durationSeconds('1500ms'), undefined);
  t.is(durationSeconds('1m0.5s'), undefined);
  t.is(durationSeconds('2000ms'), 2);
});

test('seconds format as the shortest Go duration that reads back the same', (t) => {
  const cases: Array<[number, string]> = [
    [0, '0s'],
    [59, '59s'],
    [60, '1m'],
    [90, '1m30s'],
    [900, '15m'],
    [5400, '1h30m'],
    [3601, '1h1s'],
    [315_360_000, '87600h'],
    [-300, '-5m'],
  ];
  for (const [seconds, text] of cases) {
    t.is(formatDurationSeconds(seconds), text);
    t.is(durationSeconds(text), seconds);
  }
});
