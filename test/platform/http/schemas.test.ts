import test from 'ava';
import { z } from 'zod';
import { MAX_INPUT_DEPTH, StorableInput, dateTime, isStorableText, storableText } from '../../../src/platform/http/schemas.ts';

const issuesOf = (value: unknown) => (StorableInput.safeParse(value).error?.issues ?? []).map((issue) => issue.path.join('.'));

test('NUL and unpaired surrogates are not storable text; paired surrogates are', (t) => {
  for (const text of ['\u0000', 'a\u0000', '\uD800', 'a\uDBFFb', '\uDC00', 'x\uDFFF']) {
    t.false(isStorableText(text), JSON.stringify(text));
  }
  for (const text of ['', 'plain', '\u{1F600}', '\uD83D\uDE00', '\u0001\u007f', '\uFFFD', '\u202e']) {
    t.true(isStorableText(text), JSON.stringify(text));
  }
});

test('storableText replaces what cannot be stored with U+FFFD and leaves the rest', (t) => {
  t.is(storableText('curl/8\u0000\uD800 \u{1F600}'), 'curl/8\uFFFD\uFFFD \u{1F600}');
  t.is(storableText('Mozilla/5.0'), 'Mozilla/5.0');
});

test('StorableInput finds bad strings and keys anywhere, by path', (t) => {
  t.deepEqual(issuesOf({ email: 'ok', password: 'a\u0000', list: ['x', { deep: '\uD800' }], n: 1, b: null }).sort(), ['list.1.deep', 'password']);
  t.deepEqual(issuesOf({ 'bad\u0000key': 1 }), ['']);
  t.deepEqual(issuesOf('\u0000'), ['']);
  t.deepEqual(issuesOf({ fine: ['a', { b: 'c' }], emoji: '\u{1F600}' }), []);
});

test('StorableInput refuses nesting deeper than the limit without recursing, and caps its issues', (t) => {
  const nested = (depth: number) => JSON.parse('['.repeat(depth) + ']'.repeat(depth)) as unknown;
  t.deepEqual(issuesOf(nested(MAX_INPUT_DEPTH)), []);
  t.is(issuesOf(nested(MAX_INPUT_DEPTH + 1)).length, 1);
  t.is(issuesOf(nested(200_000)).length, 1);
  t.is(issuesOf(Array.from({ length: 1_000 }, () => '\u0000')).length, 20);
});

test('dateTime takes RFC 3339 date-times with an offset only, and a bad one stops the object refinements', (t) => {
  const schema = z.object({ from: dateTime().optional() }).superRefine((value, ctx) => {
    if (!(value.from instanceof Date)) {
      ctx.addIssue({ code: 'custom', path: ['refined'], message: 'ran on a non-date' });
    }
  });
  t.deepEqual(schema.parse({ from: '2026-11-20T00:00:00+01:00' }).from, new Date('2026-11-19T23:00:00Z'));
  for (const from of ['2026-11-20', 'abc', '2026-02-30T00:00:00Z', '2026-11-20T00:00:00', '']) {
    const issues = schema.safeParse({ from }).error?.issues ?? [];
    t.deepEqual(
      issues.map((issue) => issue.path.join('.')),
      ['from'],
      from,
    );
  }
});
