import { z } from 'zod';

/** Deeper JSON than this is refused: no route takes it, and walking it costs the server. */
export const MAX_INPUT_DEPTH = 32;

// A part with more unstorable strings than this gets this many issues: the answer stays small.
const MAX_TEXT_ISSUES = 20;

// NUL (PostgreSQL text cannot hold it) and unpaired surrogates (no UTF-8 form: PostgreSQL and
// every client reading the value back would reject or mangle it). With the u flag a paired
// surrogate is one code point, so the class matches only lone halves.
const UNSTORABLE = /[\u0000\uD800-\uDFFF]/u;

export const UNSTORABLE_TEXT_MESSAGE = 'must not contain NUL characters or unpaired surrogates';

/** True when PostgreSQL can store the string as text and it reads back unchanged. */
export function isStorableText(value: string): boolean {
  return !UNSTORABLE.test(value);
}

/** The string with NUL and unpaired surrogates replaced by U+FFFD, for headers that are logged or stored. */
export function storableText(value: string): string {
  return isStorableText(value) ? value : value.replace(/[\u0000\uD800-\uDFFF]/gu, '\uFFFD');
}

/**
 * Refuses, anywhere in a request part, a string value or object key that is not storable text
 * and nesting deeper than MAX_INPUT_DEPTH. The router applies it to params, query and body before
 * the route's own schema, so no route can forget it. Walked with a stack, not recursion: a body
 * of nested arrays within the size limit is deeper than the call stack.
 */
export const StorableInput = z.unknown().superRefine((value, ctx) => {
  const pending: Array<{ value: unknown; path: PropertyKey[] }> = [{ value, path: [] }];
  let issues = 0;
  const refuse = (path: PropertyKey[], message: string) => {
    issues += 1;
    ctx.addIssue({ code: 'custom', path, message });
  };
  while (pending.length > 0 && issues < MAX_TEXT_ISSUES) {
    const { value: item, path } = pending.pop()!;
    if (typeof item === 'string') {
      if (!isStorableText(item)) {
        refuse(path, UNSTORABLE_TEXT_MESSAGE);
      }
      continue;
    }
    if (typeof item !== 'object' || item === null) {
      continue;
    }
    if (path.length >= MAX_INPUT_DEPTH) {
      refuse(path, `must not nest deeper than ${MAX_INPUT_DEPTH} levels`);
      continue;
    }
    for (const [key, child] of Object.entries(item)) {
      if (!isStorableText(key)) {
        refuse(path, `has a key that ${UNSTORABLE_TEXT_MESSAGE}`);
        continue;
      }
      pending.push({ value: child, path: [...path, key] });
    }
  }
});

/**
 * An RFC 3339 date-time with an offset (a date alone is refused), as a Date. A malformed value
 * aborts, so refinements of the enclosing object never see it as a string.
 */
export const dateTime = () =>
  z.iso
    .datetime({ offset: true, abort: true })
    .transform((text) => new Date(text))
    .describe('RFC 3339 date-time with an offset, such as 2026-11-20T00:00:00Z');

/** An instant in an answer, RFC 3339 on the wire; the OpenAPI document says `format: date-time`. */
export const timestamp = () => z.string().meta({ format: 'date-time' });
