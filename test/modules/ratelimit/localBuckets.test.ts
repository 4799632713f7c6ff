import test from 'ava';
import { LocalBuckets } from '../../../src/modules/ratelimit/localBuckets.ts';
import { gcraRule, shareRule } from '../../../src/modules/ratelimit/rules.ts';

// 10 a second: one unit every 100 ms. Times are explicit microseconds, so nothing here waits.
const rule = gcraRule({ limit: 10, periodSeconds: 1 });
const SECOND = 1_000_000;

const grants = (buckets: LocalBuckets, key: string, times: number[], live: number, aloneSinceUs: number) =>
  times.filter((nowUs) => buckets.take(key, shareRule(rule, live), nowUs, aloneSinceUs).allowed).length;

test('alone, a bucket the database last reported full stays full until the episode began: what it regained meanwhile may be spent elsewhere', (t) => {
  const buckets = new LocalBuckets();
  const reportedAt = 10 * SECOND;
  // Full at the report: its TAT a whole tolerance ahead.
  buckets.follow('flooded', reportedAt + rule.toleranceUs, reportedAt);
  const aloneSince = reportedAt + 3 * SECOND;
  // Three seconds later it would have regained everything; decided alone it has regained nothing.
  t.is(buckets.take('flooded', shareRule(rule, 2), aloneSince, aloneSince).allowed, false);
  // From the episode on it refills at the share's pace: two instances, one unit per 200 ms each.
  t.is(grants(buckets, 'flooded', [aloneSince + 150_000, aloneSince + 200_000, aloneSince + 250_000, aloneSince + 400_000], 2, aloneSince), 2);
});

test('alone, a key the database never reported gets the share of a full budget, and the freeze applies once per report', (t) => {
  const buckets = new LocalBuckets();
  const since = 50 * SECOND;
  t.is(
    grants(
      buckets,
      'fresh',
      Array.from({ length: 10 }, () => since),
      2,
      since,
    ),
    5,
  );
  buckets.follow('half', since + rule.toleranceUs / 2, since);
  const later = since + SECOND;
  // Half used at the report, frozen until `later`: 5 left, 2 of them this instance's (floor(5 / 2)).
  t.is(
    grants(
      buckets,
      'half',
      Array.from({ length: 10 }, () => later),
      2,
      later,
    ),
    2,
  );
});
